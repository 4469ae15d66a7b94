import Crypto
import CryptoExtras
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
///
/// The hierarchy: the credential gives the key-encryption key (KEK); the KEK
/// wraps the name key and each data key (sealed values in the store's key
/// table). Changing the passphrase re-wraps those few keys; rotating the
/// data key re-seals the entries.
struct StoreKeys: Sendable {
    /// Random, made with the store: every context names it, so that nothing
    /// moves between stores, even stores of the same name in two files.
    let storeID: Data
    let kek: SealingKey
    /// Encrypts entry names deterministically (AES-GCM-SIV), so that a name
    /// can be looked up and listed without being readable in the file.
    let nameKey: SymmetricKey
    var dataKeys: SealingKeyring
    /// What every entry's context starts with, computed once.
    private let entryPrefix: String
    /// The additional data of every sealed name.
    private let nameContext: Data

    init(storeID: Data, kek: SealingKey, nameKey: SymmetricKey, dataKeys: SealingKeyring) {
        self.storeID = storeID
        self.kek = kek
        self.nameKey = nameKey
        self.dataKeys = dataKeys
        entryPrefix = Self.prefix(storeID) + "entry "
        nameContext = Data((Self.prefix(storeID) + "names").utf8)
    }

    /// The id every key-encryption key carries (the data keys count from 1).
    static let kekID: UInt32 = 0

    /// What a store's contexts start with: its id, in hexadecimal.
    static func prefix(_ storeID: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        let hex = storeID.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }
        return "dbcrypt store " + String(decoding: hex, as: UTF8.self) + ": "
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

    /// The stored form of an entry name: AES-GCM-SIV under the name key, with
    /// a fixed nonce, so one name always gives the same bytes (ciphertext ‖ tag).
    func sealName(_ name: String) throws -> Data {
        let box = try AES.GCM._SIV.seal(Data(name.utf8), using: nameKey, nonce: Self.nameNonce, authenticating: nameContext)
        return box.ciphertext + box.tag
    }

    /// The entry name stored as ``sealName(_:)``.
    func openName(_ sealed: Data) throws -> String {
        guard sealed.count >= 16 else { throw SealError.authenticationFailed }
        let box = try AES.GCM._SIV.SealedBox(nonce: Self.nameNonce, ciphertext: sealed.dropLast(16), tag: sealed.suffix(16))
        do {
            guard let name = String(data: try AES.GCM._SIV.open(box, using: nameKey, authenticating: nameContext), encoding: .utf8) else {
                throw SealError.authenticationFailed
            }
            return name
        } catch {
            throw SealError.authenticationFailed
        }
    }

    // A name is sealed under one key with one nonce by design: AES-GCM-SIV
    // then reveals only whether two names are equal, which a lookup needs.
    private static let nameNonce = try! AES.GCM._SIV.Nonce(data: Data(count: 12))
}
