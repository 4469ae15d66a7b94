import Crypto
import DBCrypt
import Foundation

extension SealedStore {
    /// Changes what opens the store: a new salt (and, with `keyDerivation`,
    /// new derivation parameters) for a passphrase, and the store's keys
    /// wrapped again under the new key-encryption key, in one transaction.
    /// No entry is touched, so it takes as long whatever the store's size.
    /// Other `SealedStore` objects open on this store must be opened again.
    ///
    /// - throws: ``SealError/invalidKeyDerivation(reason:)``, and the
    ///   ``DatabaseError`` of the write.
    public func changeCredential(to credential: StoreCredential, keyDerivation: KeyDerivation? = nil) throws {
        let current = try writer.read { db in try StoreSchema.header(db, store: self.name) }
        guard let current else { throw SealError.noSuchStore(name: name) }
        var kdf: KeyDerivation?, salt: Data?
        if case .passphrase = credential {
            kdf = keyDerivation ?? current.kdf ?? .argon2idDefault
            salt = StoreSchema.random16()
        }
        let newKEK = try StoreKeys.keyEncryptionKey(credential, kdf: kdf, salt: salt)
        let changed: StoreKeys = try writer.write { db in
            let keys = try self.reloadKeys(db)
            let storeID = keys.storeID
            let wrappedNameKey = try keys.nameKey.withUnsafeBytes { try newKEK.seal($0, context: StoreKeys.nameKeyContext(storeID)) }
            let kdfText = try StoreSchema.kdfText(kdf)
            try db.execute("UPDATE dbcrypt_sealed_store SET kdf = ?, salt = ?, name_key = ? WHERE name = ?",
                           [kdfText, salt, wrappedNameKey, self.name])
            for id in keys.dataKeys.ids {
                let wrapped = try keys.dataKeys.key(id)!.symmetricKey.withUnsafeBytes {
                    try newKEK.seal($0, context: StoreKeys.dataKeyContext(storeID, id))
                }
                try db.execute("UPDATE dbcrypt_sealed_key SET wrapped = ? WHERE store = ? AND id = ?", [wrapped, self.name, Int64(id)])
            }
            return StoreKeys(storeID: storeID, kek: newKEK, nameKey: keys.nameKey, dataKeys: keys.dataKeys)
        }
        replaceKeys(changed)
    }

    /// How many entries are still sealed under an older data key: a
    /// rotation was interrupted (``finishRotation(progress:cancellation:)``
    /// finishes it), or none ran.
    ///
    /// - throws: the ``DatabaseError`` of the read.
    public func entriesUnderOlderKeys() throws -> Int {
        try writer.read { db in
            let current = try db.fetchScalar(Int64.self, "SELECT current_key FROM dbcrypt_sealed_store WHERE name = ?", [self.name])
            return try db.fetchScalar(
                Int.self, "SELECT count(*) FROM dbcrypt_sealed_entry WHERE store = ? AND key_id != ?", [self.name, current]) ?? 0
        }
    }

    /// Makes a new data key the current one, then seals every entry again
    /// under it (``finishRotation(progress:cancellation:)``). From the first
    /// step on, new values are sealed with the new key; the old one stays
    /// until no entry uses it, so the store reads at every instant, and a
    /// rotation that is killed or cancelled is finished by calling
    /// ``finishRotation(progress:cancellation:)`` (or this) again.
    ///
    /// - throws: ``DatabaseError/cancelled`` when `cancellation` is cancelled
    ///   (the entries re-sealed so far stay so), and the ``DatabaseError`` of the writes.
    public func rotateDataKey(progress: (@Sendable (ExportProgress) -> Void)? = nil, cancellation: ExportCancellation? = nil) throws {
        let rotated: StoreKeys = try writer.write { db in
            let keys = try self.reloadKeys(db)
            let id = (keys.dataKeys.ids.max() ?? 0) + 1
            let (key, wrapped) = try StoreKeys.newWrappedKey(kek: keys.kek, context: StoreKeys.dataKeyContext(keys.storeID, id), id: id)
            try db.execute("INSERT INTO dbcrypt_sealed_key(store, id, wrapped) VALUES (?, ?, ?)", [self.name, Int64(id), wrapped])
            try db.execute("UPDATE dbcrypt_sealed_store SET current_key = ? WHERE name = ?", [Int64(id), self.name])
            let others = keys.dataKeys.ids.compactMap { keys.dataKeys.key($0) }
            return StoreKeys(storeID: keys.storeID, kek: keys.kek, nameKey: keys.nameKey,
                             dataKeys: try SealingKeyring(current: key, others: others))
        }
        replaceKeys(rotated)
        try finishRotation(progress: progress, cancellation: cancellation)
    }

    /// Seals every entry still under an older data key again under the
    /// current one, a batch per transaction, then forgets the keys no entry
    /// uses. Killed or cancelled, it loses nothing: each entry is under its
    /// old key or its new one, and a later call goes on from there.
    ///
    /// - throws: ``DatabaseError/cancelled``, ``SealError/authenticationFailed``
    ///   for an entry that was altered (it is left as it is), and the
    ///   ``DatabaseError`` of the writes.
    public func finishRotation(progress: (@Sendable (ExportProgress) -> Void)? = nil, cancellation: ExportCancellation? = nil) throws {
        let total = try entriesUnderOlderKeys()
        var done = 0
        progress?(ExportProgress(completed: 0, total: total))
        while true {
            if cancellation?.isCancelled == true { throw DatabaseError.cancelled }
            let resealed: Int = try writer.write { db in
                let keys = try self.reloadKeys(db)
                let current = keys.dataKeys.current.id
                let rows = try db.fetchAll(
                    "SELECT name, value FROM dbcrypt_sealed_entry WHERE store = ? AND key_id != ? LIMIT ?",
                    [self.name, Int64(current), Self.rotationBatch])
                for row in rows {
                    let sealedName: Data = try row[0]
                    let context = keys.entryContext(try keys.openName(sealedName))
                    var plaintext = try keys.dataKeys.open(try row[1] as Data, context: context)
                    defer { plaintext.resetBytes(in: 0..<plaintext.count) }
                    try db.execute("UPDATE dbcrypt_sealed_entry SET value = ?, key_id = ? WHERE store = ? AND name = ?",
                                   [try keys.dataKeys.seal(plaintext, context: context), Int64(current), self.name, sealedName])
                }
                if rows.count < Self.rotationBatch {
                    try db.execute("""
                        DELETE FROM dbcrypt_sealed_key WHERE store = ?1 AND id != ?2
                        AND id NOT IN (SELECT key_id FROM dbcrypt_sealed_entry WHERE store = ?1)
                        """, [self.name, Int64(current)])
                }
                return rows.count
            }
            done += resealed
            progress?(ExportProgress(completed: min(done, total), total: total))
            if resealed < Self.rotationBatch { break }
        }
        _ = try writer.read { db in try self.reloadKeys(db) }
    }

    /// Entries sealed again per transaction by a rotation.
    static let rotationBatch = 256
}
