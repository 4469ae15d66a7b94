import DBCrypt
import Foundation

/// The tables every sealed store of a database shares, and its header row.
///
/// - `dbcrypt_sealed_store`: one row per store: its format, its random id,
///   the key derivation and salt of a passphrase (NULL for a key), the name
///   key and which data key is current. None of it is secret: the keys are
///   wrapped under the key-encryption key.
/// - `dbcrypt_sealed_key`: the data keys, wrapped.
/// - `dbcrypt_sealed_entry`: the entries: the lookup tag of the name
///   (HMAC-SHA256, 16 bytes), the name encrypted with the tag (SIV, as long
///   as the name), the value sealed with a data key (whose id its header
///   carries).
///
/// Format 3. Formats 1 and 2 were development versions, never released:
/// names sealed with AES-GCM-SIV (1) or AES-GCM (2, 33 bytes more per row),
/// and the key id in a column of its own (1).
enum StoreSchema {
    static let format = 3

    static let create = """
        CREATE TABLE IF NOT EXISTS dbcrypt_sealed_store(
            name TEXT PRIMARY KEY NOT NULL,
            format INTEGER NOT NULL,
            store_id BLOB NOT NULL,
            kdf TEXT,
            salt BLOB,
            name_key BLOB NOT NULL,
            current_key INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS dbcrypt_sealed_key(
            store TEXT NOT NULL,
            id INTEGER NOT NULL,
            wrapped BLOB NOT NULL,
            PRIMARY KEY(store, id)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS dbcrypt_sealed_entry(
            store TEXT NOT NULL,
            tag BLOB NOT NULL,
            name BLOB NOT NULL,
            value BLOB NOT NULL,
            PRIMARY KEY(store, tag)) WITHOUT ROWID;
        """

    /// A store's header row.
    struct Header {
        var storeID: Data
        var kdf: KeyDerivation?
        var salt: Data?
        var wrappedNameKey: Data
        var currentKey: UInt32
    }

    /// 16 random bytes: a new store's id, a new salt.
    static func random16() -> Data {
        Data((0..<16).map { _ in UInt8.random(in: 0...255) })
    }

    /// The `kdf` column's text for `kdf` (nil for a store opened with a key),
    /// as ``header(_:store:)`` reads it back.
    static func kdfText(_ kdf: KeyDerivation?) throws -> String? {
        try kdf.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
    }

    /// Whether the store tables exist.
    static func exists(_ db: Database) throws -> Bool {
        try db.fetchScalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'dbcrypt_sealed_store'") == 1
    }

    /// The header of store `name`, or nil when there is none.
    ///
    /// - throws: ``SealError/storeDamaged(reason:)`` for a row this library did not write.
    static func header(_ db: Database, store name: String) throws -> Header? {
        guard try exists(db),
              let row = try db.fetchOne(
                "SELECT format, store_id, kdf, salt, name_key, current_key FROM dbcrypt_sealed_store WHERE name = ?", [name])
        else { return nil }
        let format: Int = try row[0]
        guard format == Self.format else {
            throw SealError.storeDamaged(reason: "store \"\(name)\" is in format \(format), which this DBCryptSeal does not read")
        }
        do {
            let kdfText: String? = try row[2]
            let kdf = try kdfText.map { try JSONDecoder().decode(KeyDerivation.self, from: Data($0.utf8)) }
            let storeID: Data = try row[1]
            let salt: Data? = try row[3]
            guard storeID.count == 16, (kdf == nil) == (salt == nil) else { throw SealError.storeDamaged(reason: "") }
            let currentKey: Int64 = try row[5]
            guard let current = UInt32(exactly: currentKey) else { throw SealError.storeDamaged(reason: "") }
            return Header(storeID: storeID, kdf: kdf, salt: salt, wrappedNameKey: try row[4], currentKey: current)
        } catch {
            throw SealError.storeDamaged(reason: "the header row of store \"\(name)\" is malformed")
        }
    }

    /// The id of the store's current data key, or nil when there is no such store.
    static func currentKey(_ db: Database, store name: String) throws -> Int64? {
        try db.cachedStatement("SELECT current_key FROM dbcrypt_sealed_store WHERE name = ?").query(values: name).next()?[0]
    }

    /// The wrapped data keys of store `name`, by id.
    static func wrappedKeys(_ db: Database, store name: String) throws -> [UInt32: Data] {
        var keys: [UInt32: Data] = [:]
        for row in try db.fetchAll("SELECT id, wrapped FROM dbcrypt_sealed_key WHERE store = ?", [name]) {
            let id: Int64 = try row[0]
            guard let id = UInt32(exactly: id) else { throw SealError.storeDamaged(reason: "a data key of store \"\(name)\" has id \(id)") }
            keys[id] = try row[1]
        }
        return keys
    }
}
