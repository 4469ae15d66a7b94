import CPrimitives
import DBCrypt
import DBCryptCore
import Foundation

/// A 32-byte AES-256 key that seals and opens values, with the id that
/// sealed values carry to say which key sealed them.
///
/// Its bytes live in memory that is wiped when the last copy is released,
/// and in an OpenSSL AES-GCM context scheduled
/// once (OpenSSL wipes it when it is freed); its description prints only
/// the id.
///
/// ```swift
/// let key = SealingKey.random()
/// let sealed = try key.seal("s3cr3t-token", context: "account 42: token")
/// let token = try key.openString(sealed, context: "account 42: token")
/// ```
public struct SealingKey: Sendable, CustomStringConvertible {
    let secret: SecretBytes
    /// The same key, scheduled once for sealing and opening.
    let cipher: AESGCMKey

    /// The id sealed values carry. By default the key's fingerprint: the
    /// first 4 bytes of HMAC-SHA256(key, "DBCryptSeal key id"), which tells
    /// a wrong key apart from an altered value without revealing the key.
    public let id: UInt32

    /// A key from its 32 bytes.
    ///
    /// - throws: ``SealError/invalidKey(reason:)`` when `bytes` is not 32 bytes long.
    public init(bytes: some ContiguousBytes, id: UInt32? = nil) throws {
        let count = bytes.withUnsafeBytes { $0.count }
        guard count == 32 else { throw SealError.invalidKey(reason: "an AES-256 key is 32 bytes, not \(count)") }
        self.init(bytes.withUnsafeBytes { SecretBytes($0) }, id: id)
    }

    init(_ key: SecretBytes, id: UInt32?) {
        secret = key
        cipher = key.withUnsafeBytes { AESGCMKey($0) }
        self.id = id ?? Self.fingerprint(of: key)
    }

    /// A new key from the system's secure random generator (a failing
    /// generator, which leaves no key to make, stops the process).
    public static func random(id: UInt32? = nil) -> SealingKey {
        let key = SecretBytes(count: 32) { bytes in
            guard dbcrypt_random_bytes(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), 32) == 1 else {
                fatalError("the system's random generator failed")
            }
        }
        return SealingKey(key, id: id)
    }

    /// A key written as 64 hexadecimal digits (either case).
    ///
    /// - throws: ``SealError/invalidKey(reason:)`` for other text.
    public init(hex: String, id: UInt32? = nil) throws {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else {
            throw SealError.invalidKey(reason: "a hexadecimal key is 64 digits, not \(digits.count) characters")
        }
        guard var bytes = Hex.decode(digits) else {
            throw SealError.invalidKey(reason: "a hexadecimal key holds only the digits 0-9 and a-f")
        }
        defer { SecretBytes.wipe(&bytes) }
        try self.init(bytes: bytes, id: id)
    }

    /// A key written in Base64 (standard alphabet, with its padding).
    ///
    /// - throws: ``SealError/invalidKey(reason:)`` for text that is not
    ///   Base64, or not of 32 bytes.
    public init(base64: String, id: UInt32? = nil) throws {
        guard var bytes = Data(base64Encoded: base64) else {
            throw SealError.invalidKey(reason: "the key is not Base64 text")
        }
        defer { bytes.resetBytes(in: 0..<bytes.count) }
        guard bytes.count == 32 else {
            throw SealError.invalidKey(reason: "the Base64 key decodes to \(bytes.count) bytes, not 32")
        }
        try self.init(bytes: bytes, id: id)
    }

    /// The compatibility form of clients that derive a key from text: the
    /// first 32 *characters* of `text`, padded with "0" to 32 characters,
    /// then their UTF-8 bytes. Use it only to talk to such a client; the key
    /// has as little strength as the text (a random key in ``init(base64:id:)``
    /// or ``init(hex:id:)`` form is what to give a server).
    ///
    /// - throws: ``SealError/invalidKey(reason:)`` when those characters are
    ///   not 32 bytes in UTF-8 (text beyond ASCII).
    public init(paddedText text: String, id: UInt32? = nil) throws {
        let characters = text.prefix(32)
        var bytes = Array((String(characters) + String(repeating: "0", count: 32 - characters.count)).utf8)
        defer { bytes.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        guard bytes.count == 32 else {
            throw SealError.invalidKey(reason: "the padded text key is \(bytes.count) bytes in UTF-8, not 32 (its first 32 characters are not all ASCII)")
        }
        try self.init(bytes: bytes, id: id)
    }

    /// A key from text, in the first form that fits: 64 hexadecimal digits;
    /// Base64 of 32 bytes; text of exactly 32 bytes in UTF-8, taken as the
    /// key's bytes. Any other text is refused (``init(paddedText:id:)`` is
    /// the explicit form for clients that pad).
    ///
    /// - throws: ``SealError/invalidKey(reason:)`` naming the forms accepted.
    public init(text: String, id: UInt32? = nil) throws {
        if text.utf8.count == 64, let key = try? SealingKey(hex: text, id: id) {
            self = key
        } else if let key = try? SealingKey(base64: text, id: id) {
            self = key
        } else if text.utf8.count == 32 {
            try self.init(bytes: Array(text.utf8), id: id)
        } else {
            throw SealError.invalidKey(reason:
                "a key text is 64 hexadecimal digits, Base64 of 32 bytes, or 32 bytes of text (this is \(text.utf8.count) bytes); "
                + "a shorter text key needs the padded-text compatibility form")
        }
    }

    /// `id` as 8 hexadecimal digits.
    public var description: String { "SealingKey(id: \(Self.idText(id)), bytes: <redacted>)" }

    static func idText(_ id: UInt32) -> String {
        let digits = String(id, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    private static func fingerprint(of key: SecretBytes) -> UInt32 {
        let mac = key.withUnsafeBytes { key in Array("DBCryptSeal key id".utf8).withUnsafeBytes { HMACKey(key).mac($0) } } ?? []
        return mac.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }
}


extension SealingKey {
    /// The sealing key of a raw database key: its 32 bytes (a salt it
    /// carries is not used), with `id` (by default the key's fingerprint).
    /// How a key kept in a key store seals values.
    ///
    /// ```swift
    /// let key = try SealingKey(DatabaseKey.loadOrCreate(in: SecretService(), service: "com.example.notes", account: "seal"))
    /// ```
    ///
    /// - throws: ``SealError/invalidKey(reason:)`` for a passphrase, which
    ///   must be derived first (``KeyDerivation``).
    public init(_ key: DatabaseKey, id: UInt32? = nil) throws {
        guard key.kind != .passphrase else {
            throw SealError.invalidKey(reason: "a sealing key is a raw key, not a passphrase: derive one with KeyDerivation")
        }
        self.init(key.secret.withUnsafeBytes { SecretBytes($0) }, id: id)
    }
}
