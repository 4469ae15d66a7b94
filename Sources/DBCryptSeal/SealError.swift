import DBCryptCore

/// Why a value could not be sealed or opened. Each case says what to do
/// next; none carries a key, a plaintext or a sealed value.
public enum SealError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The key is not a 32-byte AES-256 key, or its text form does not
    /// decode to one.
    case invalidKey(reason: String)
    /// The bytes are not a sealed value: they do not start with a version
    /// byte of DBCryptSeal's format.
    case notSealed
    /// Sealed by a later version of the format than this library reads.
    case unsupportedVersion(UInt8)
    /// Too short to hold the header, the nonce and the tag: cut off.
    case truncated(byteCount: Int)
    /// Sealed with the key whose id is `sealedWith`; this key's id is `given`
    /// (or, for a ``SealingKeySet``, it holds no key with that id).
    case wrongKey(sealedWith: UInt32, given: [UInt32])
    /// The authentication tag does not match: the value was altered, or is
    /// opened with another context (or additional data) than it was sealed
    /// with, or with another key under the same id.
    case authenticationFailed
    /// A server envelope that is not Base64 text.
    case notBase64
    /// The opened bytes are not UTF-8 text.
    case notUTF8
    /// Key derivation parameters out of range (read from a damaged file, or
    /// given), or a derivation that failed (out of memory).
    case invalidKeyDerivation(reason: String)
    /// The passphrase or key does not open the store (or it was made with
    /// the other kind of credential).
    case wrongCredential(reason: String)
    /// The database has no store of that name, and opening was not to create one.
    case noSuchStore(name: String)
    /// The store's tables hold what this library did not write: a format it
    /// does not read, a missing key, a malformed row.
    case storeDamaged(reason: String)
    /// A `Codable` value could not be encoded before sealing, or decoded
    /// after opening.
    case coding(reason: String)
    /// The system's cryptography failed: no random bytes, or OpenSSL out
    /// of memory. Nothing was sealed or opened; try again.
    case systemFailure(reason: String)
    /// Key text read from `source` (a file, an environment variable, the
    /// terminal: "the key file key.txt") is empty where a passphrase was
    /// to be (``StoreCredential/init(keyText:source:)``).
    case emptyPassphrase(source: String)
    /// Key text from `source` starts as a key (`x'`) without being one:
    /// 64 or 96 hex digits (``StoreCredential/init(keyText:source:)``).
    case malformedKeyText(source: String)
    /// Key text from `source` is not UTF-8 text: `what` is "passphrase" or "key".
    case keyTextNotUTF8(source: String, what: String)
    /// Key text from `source` is not a sealing key
    /// (``SealingKey/init(keyText:source:paddedText:id:)``): `reason` is
    /// the ``invalidKey(reason:)`` sentence.
    case unusableKeyText(source: String, reason: String)

    /// What is wrong and what to do next; the cases about key text from a
    /// source are sentences of their own, since they name where it came from.
    public var description: String {
        switch self {
        case .invalidKey(let reason):
            "invalid key: \(reason)"
        case .notSealed:
            "not a sealed value: it does not start with a DBCryptSeal version byte"
        case .unsupportedVersion(let version):
            "sealed in format version \(version & 0x0F), which this DBCryptSeal does not read: update DBCryptSeal to open it"
        case .truncated(let count):
            "the sealed value is cut off: \(count) bytes is shorter than its header, nonce and tag"
        case .wrongKey(let sealedWith, let given):
            "sealed with key \(SealingKey.idText(sealedWith)), not with \(given.map(SealingKey.idText).joined(separator: ", ")): open it with that key"
        case .authenticationFailed:
            "the sealed value does not authenticate: it was altered, or belongs to another context (another entry, table or store)"
        case .notBase64:
            "the envelope is not Base64 text"
        case .notUTF8:
            "the opened value is not UTF-8 text: open it as bytes"
        case .invalidKeyDerivation(let reason):
            "cannot derive the key: \(reason)"
        case .wrongCredential(let reason):
            "wrong passphrase or key: \(reason)"
        case .noSuchStore(let name):
            "the database has no sealed store named \"\(name)\": check the name, or create it"
        case .storeDamaged(let reason):
            "the sealed store is damaged: \(reason)"
        case .coding(let reason):
            "the value could not be encoded or decoded: \(reason)"
        case .systemFailure(let reason):
            "the system's cryptography failed: \(reason); nothing was sealed or opened, try again"
        case .emptyPassphrase(let source):
            "The passphrase in \(source) is empty."
        case .malformedKeyText(let source):
            "The key in \(source) is malformed: write x' then 64 hex digits (or 96, with a salt) then '."
        case .keyTextNotUTF8(let source, let what):
            "The \(what) in \(source) is not UTF-8 text."
        case .unusableKeyText(let source, let reason):
            "The key in \(source) is not usable: \(reason)"
        }
    }
}

extension SealError: DBCryptError {
    /// What kind of failure this is: ``DBCryptErrorCategory/wrongKey`` for a
    /// key or credential that does not open it, ``DBCryptErrorCategory/damaged``
    /// for a value or store that does not authenticate or is cut off.
    public var category: DBCryptErrorCategory {
        switch self {
        case .wrongKey, .wrongCredential: .wrongKey
        case .authenticationFailed, .truncated, .storeDamaged: .damaged
        case .noSuchStore: .notFound
        case .unsupportedVersion: .unsupported
        case .systemFailure: .storage
        case .invalidKey, .notSealed, .notBase64, .notUTF8, .invalidKeyDerivation, .coding,
             .emptyPassphrase, .malformedKeyText, .keyTextNotUTF8, .unusableKeyText: .misuse
        }
    }
}
