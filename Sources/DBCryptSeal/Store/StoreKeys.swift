import Crypto
import DBCrypt
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
/// tag, and the key that seals the name itself, for listing.
final class StoreKeys: Sendable {
    /// Random, made with the store: every context names it, so that nothing
    /// moves between stores, even stores of the same name in two files.
    let storeID: Data
    let kek: SealingKey
    /// Wrapped in the store's header; the two keys below come from it.
    let nameKey: SymmetricKey
    /// Tags rows by entry name (HMAC-SHA256), so that a name can be looked
    /// up without being readable in the file.
    let lookup: LookupKey
    /// Seals each entry's name (AES-256-GCM, bound to the row's tag), so
    /// that names can be listed.
    let nameSealing: SealingKey
    let dataKeys: SealingKeyring
    /// What every entry's context starts with, computed once.
    private let entryPrefix: String
    /// What every sealed name's context starts with.
    private let namePrefix: String

    init(storeID: Data, kek: SealingKey, nameKey: SymmetricKey, dataKeys: SealingKeyring) {
        self.storeID = storeID
        self.kek = kek
        self.nameKey = nameKey
        self.dataKeys = dataKeys
        let lookupBytes = HKDF<SHA256>.deriveKey(inputKeyMaterial: nameKey, info: Data("DBCryptSeal store: lookup tags".utf8), outputByteCount: 32)
        lookup = lookupBytes.withUnsafeBytes { LookupKey($0) }
        nameSealing = SealingKey(
            HKDF<SHA256>.deriveKey(inputKeyMaterial: nameKey, info: Data("DBCryptSeal store: names".utf8), outputByteCount: 32),
            id: 0)
        entryPrefix = Self.prefix(storeID) + "entry "
        namePrefix = Self.prefix(storeID) + "name of row "
    }

    /// The same keys with other data keys, or another KEK.
    func with(kek: SealingKey? = nil, dataKeys: SealingKeyring? = nil) -> StoreKeys {
        StoreKeys(storeID: storeID, kek: kek ?? self.kek, nameKey: nameKey, dataKeys: dataKeys ?? self.dataKeys)
    }

    /// The id every key-encryption key carries (the data keys count from 1).
    static let kekID: UInt32 = 0

    /// What a store's contexts start with: its id, in hexadecimal.
    static func prefix(_ storeID: Data) -> String {
        "dbcrypt store " + hex(storeID) + ": "
    }
    static func nameKeyContext(_ storeID: Data) -> String { prefix(storeID) + "name key" }
    static func dataKeyContext(_ storeID: Data, _ id: UInt32) -> String { prefix(storeID) + "data key \(id)" }

    func entryContext(_ name: String) -> String { entryPrefix + name }

    /// The KEK of `credential`; for a passphrase, derived with `kdf` and `salt`.
    static func keyEncryptionKey(_ credential: StoreCredential, kdf: KeyDerivation?, salt: Data?) throws -> SealingKey {
        switch credential {
        case .key(let key):
            return SealingKey(key.symmetricKey, id: kekID)
        case .passphrase(let passphrase):
            guard let kdf, let salt else {
                throw SealError.wrongCredential(reason: "this store was made with a key, not a passphrase")
            }
            return SealingKey(try kdf.deriveKey(from: passphrase, salt: salt), id: kekID)
        }
    }

    /// A random 32-byte key, sealed under `kek` with `context`.
    static func newWrappedKey(kek: SealingKey, context: String, id: UInt32) throws -> (SealingKey, Data) {
        let key = SealingKey.random(id: id)
        let wrapped = try key.symmetricKey.withUnsafeBytes { try kek.seal($0, context: context) }
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

    /// The stored form of entry `name`, bound to its row's tag.
    func sealName(_ name: String, tag: Data) throws -> Data {
        try nameSealing.seal(Data(name.utf8), context: nameContext(tag))
    }

    /// The entry name stored as ``sealName(_:tag:)``.
    /// - Throws: ``SealError/storeDamaged(reason:)`` when it does not open.
    func openName(_ sealed: Data, tag: Data) throws -> String {
        guard let name = try? nameSealing.openString(sealed, context: nameContext(tag)), (try? self.tag(name)) == tag else {
            throw SealError.storeDamaged(reason: "an entry's sealed name does not open, or does not match its row")
        }
        return name
    }

    private func nameContext(_ tag: Data) -> String { namePrefix + Self.hex(tag) }

    static func hex(_ bytes: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }
}
