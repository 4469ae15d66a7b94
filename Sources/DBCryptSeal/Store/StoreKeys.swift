import DBCrypt
import DBCryptCore
import Foundation

/// What opens a store: a passphrase (stretched by the store's key
/// derivation, with its salt) or a key the app keeps itself (a random key in
/// the system keychain, for example).
public enum StoreCredential: Sendable, CustomStringConvertible {
    /// A passphrase, derived with the store's ``KeyDerivation`` and salt.
    case passphrase(String)
    /// A 32-byte key used as the key-encryption key as it is.
    case key(SealingKey)

    /// Never the secret.
    public var description: String {
        switch self {
        case .passphrase: "StoreCredential.passphrase(<redacted>)"
        case .key: "StoreCredential.key(<redacted>)"
        }
    }
}

/// The keys of one open store, and every context its values are bound to.
/// Immutable: a change of keys makes a new one.
///
/// The hierarchy: the credential gives the key-encryption key (KEK); the KEK
/// wraps the name key and each data key (sealed values in the store's key
/// table). Changing the passphrase re-wraps those few keys; rotating the
/// data key re-seals the entries. The name key gives two keys of its own
/// (HKDF-SHA256): the lookup key, whose HMAC of an entry name is the row's
/// tag, and the key that encrypts the name itself with that tag as its
/// counter block, for listing (SIV: see ``NameCipher``).
final class StoreKeys: Sendable {
    /// Random, made with the store: every context names it, so that nothing
    /// moves between stores, even stores of the same name in two files.
    let storeID: Data
    let kek: SealingKey
    /// Wrapped in the store's header; the two keys below come from it.
    let nameKey: SecretBytes
    /// Tags rows by entry name (HMAC-SHA256), so that a name can be looked
    /// up without being readable in the file.
    let lookup: LookupKey
    /// Encrypts each entry's name with its tag, so that names can be listed.
    let nameCipher: NameCipher
    let dataKeys: SealingKeySet
    /// What every entry's context starts with (UTF-8), computed once.
    private let entryPrefix: [UInt8]

    init(storeID: Data, kek: SealingKey, nameKey: SecretBytes, dataKeys: SealingKeySet) throws {
        self.storeID = storeID
        self.kek = kek
        self.nameKey = nameKey
        self.dataKeys = dataKeys
        guard let lookupBytes = hkdfSHA256(nameKey, info: "DBCryptSeal store: lookup tags"),
              let nameCipherBytes = hkdfSHA256(nameKey, info: "DBCryptSeal store: names, AES-CTR") else {
            throw SealError.invalidKey(reason: "no memory for the store's keys")
        }
        lookup = lookupBytes.withUnsafeBytes { LookupKey($0) }
        nameCipher = nameCipherBytes.withUnsafeBytes { NameCipher($0) }
        entryPrefix = Array((Self.prefix(storeID) + "entry ").utf8)
    }

    /// The same keys with other data keys, or another KEK.
    func with(kek: SealingKey? = nil, dataKeys: SealingKeySet? = nil) throws -> StoreKeys {
        try StoreKeys(storeID: storeID, kek: kek ?? self.kek, nameKey: nameKey, dataKeys: dataKeys ?? self.dataKeys)
    }

    /// The id every key-encryption key carries (the data keys count from 1).
    static let kekID: UInt32 = 0

    /// What a store's contexts start with: its id, in hexadecimal.
    static func prefix(_ storeID: Data) -> String {
        "dbcrypt store " + Hex.encode(storeID) + ": "
    }
    static func nameKeyContext(_ storeID: Data) -> String { prefix(storeID) + "name key" }
    static func dataKeyContext(_ storeID: Data, _ id: UInt32) -> String { prefix(storeID) + "data key \(id)" }

    /// Calls `body` with the context of entry `name` in UTF-8 (the store's
    /// entry prefix, then the name), assembled on the stack: the additional
    /// data its value is sealed with.
    private func withEntryContext<Result>(_ name: String, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
        var name = name
        return try name.withUTF8 { name in
            try withUnsafeTemporaryAllocation(byteCount: entryPrefix.count + name.count, alignment: 1) { context in
                entryPrefix.withUnsafeBytes { context.copyMemory(from: $0) }
                UnsafeMutableRawBufferPointer(rebasing: context[entryPrefix.count...]).copyMemory(from: UnsafeRawBufferPointer(name))
                return try body(UnsafeRawBufferPointer(context))
            }
        }
    }

    /// `value` sealed under the current data key, bound to this store and entry `name`.
    func sealEntry(_ value: UnsafeRawBufferPointer, name: String) throws -> Data {
        try withEntryContext(name) { try dataKeys.current.seal(bytes: value, additionalData: $0) }
    }

    /// The value of entry `name`, opened with the data key its header names.
    /// - Throws: as ``SealingKeySet/open(_:context:)``.
    func openEntry(_ sealed: Data, name: String) throws -> Data {
        try withEntryContext(name) { context in try sealed.withUnsafeBytes { try dataKeys.open(bytes: $0, additionalData: context) } }
    }

    /// The KEK of `credential`; for a passphrase, derived with `kdf` and `salt`.
    static func keyEncryptionKey(_ credential: StoreCredential, kdf: KeyDerivation?, salt: Data?) throws -> SealingKey {
        switch credential {
        case .key(let key):
            return SealingKey(key.secret, id: kekID)
        case .passphrase(let passphrase):
            guard let kdf, let salt else {
                throw SealError.wrongCredential(reason: "this store was made with a key, not a passphrase")
            }
            return SealingKey(try kdf.deriveKey(from: passphrase, salt: salt).secret, id: kekID)
        }
    }

    /// A random 32-byte key, sealed under `kek` with `context`.
    static func newWrappedKey(kek: SealingKey, context: String, id: UInt32) throws -> (SealingKey, Data) {
        let key = SealingKey.random(id: id)
        let wrapped = try key.secret.withUnsafeBytes { try kek.seal($0, context: context) }
        return (key, wrapped)
    }

    /// Opens a key wrapped under `kek`.
    ///
    /// - throws: ``SealError/wrongCredential(reason:)`` when it does not
    ///   authenticate: the passphrase or key is not this store's.
    static func unwrap(_ wrapped: Data, kek: SealingKey, context: String, id: UInt32) throws -> SealingKey {
        do {
            var bytes = try kek.open(wrapped, context: context)
            defer { bytes.resetBytes(in: 0..<bytes.count) }
            return try SealingKey(bytes: bytes, id: id)
        } catch SealError.authenticationFailed, SealError.wrongKey {
            throw SealError.wrongCredential(reason: "it does not open this sealed store")
        }
    }

    /// The tag of the row that holds entry `name`.
    func tag(_ name: String) throws -> Data { try lookup.tag(name) }

    /// Stored names are padded to a multiple of this many bytes, so that the
    /// file tells a name's length only to within it.
    static let nameBucket = 32

    /// The stored form of entry `name`, whose tag is `tag`: its UTF-8 bytes,
    /// then 0x80 and zeros up to a multiple of ``nameBucket``, encrypted.
    func sealName(_ name: String, tag: Data) throws -> Data {
        var padded = Data(name.utf8)
        padded.append(0x80)
        padded.append(Data(count: (Self.nameBucket - padded.count % Self.nameBucket) % Self.nameBucket))
        return try nameCipher.apply(padded, tag: tag)
    }

    /// The entry name stored as ``sealName(_:tag:)``, or unpadded as stores
    /// wrote names before they were padded, authenticated: its tag must be
    /// the row's, so only one reading can match.
    /// - Throws: ``SealError/storeDamaged(reason:)`` when it is not.
    func openName(_ sealed: Data, tag: Data) throws -> String {
        let bytes = try nameCipher.apply(sealed, tag: tag)
        if bytes.count % Self.nameBucket == 0, let marker = bytes.lastIndex(where: { $0 != 0 }), bytes[marker] == 0x80,
           let name = String(data: bytes[..<marker], encoding: .utf8), try lookup.matches(name, tag: tag) {
            return name
        }
        guard let name = String(data: bytes, encoding: .utf8), try lookup.matches(name, tag: tag) else {
            throw SealError.storeDamaged(reason: "an entry's sealed name does not match its row")
        }
        return name
    }
}

extension StoreCredential {
    /// The credential a database key gives: a raw key is the key-encryption
    /// key (``key(_:)``), a passphrase is derived with the store's settings
    /// (``passphrase(_:)``). How a key kept in a key store opens a sealed store.
    ///
    /// - throws: ``SealError/invalidKey(reason:)`` for a passphrase that is
    ///   not UTF-8 text.
    public init(_ key: DatabaseKey) throws {
        if key.kind != .passphrase {
            self = .key(try SealingKey(key))
            return
        }
        guard let text = key.secret.withUnsafeBytes({ String(validating: $0, as: UTF8.self) }) else {
            throw SealError.invalidKey(reason: "a store's passphrase is UTF-8 text")
        }
        self = .passphrase(text)
    }
}
