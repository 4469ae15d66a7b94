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
                let wrapped = try keys.dataKeys.key(id)!.secret.withUnsafeBytes {
                    try newKEK.seal($0, context: StoreKeys.dataKeyContext(storeID, id))
                }
                try db.execute("UPDATE dbcrypt_sealed_key SET wrapped = ? WHERE store = ? AND id = ?", [wrapped, self.name, Int64(id)])
            }
            return try keys.with(kek: newKEK)
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
            let current = try StoreSchema.currentKey(db, store: self.name) ?? 0
            // The key id is bytes 2-5 of every sealed value (SealedFormat).
            return try db.fetchScalar(
                Int.self, "SELECT count(*) FROM dbcrypt_sealed_entry WHERE store = ? AND substr(value, 2, 4) != ?",
                [self.name, SealedFormat.keyIDBytes(UInt32(truncatingIfNeeded: current))]) ?? 0
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
    public func rotateDataKey(progress: (@Sendable (JobProgress) -> Void)? = nil, cancellation: JobCancellation? = nil) throws {
        let rotated: StoreKeys = try writer.write { db in
            let keys = try self.reloadKeys(db)
            guard let newest = keys.dataKeys.ids.max(), newest < UInt32.max else {
                throw SealError.storeDamaged(reason: "store \"\(self.name)\" has used every data key id")
            }
            let id = newest + 1
            let (key, wrapped) = try StoreKeys.newWrappedKey(kek: keys.kek, context: StoreKeys.dataKeyContext(keys.storeID, id), id: id)
            try db.execute("INSERT INTO dbcrypt_sealed_key(store, id, wrapped) VALUES (?, ?, ?)", [self.name, Int64(id), wrapped])
            try db.execute("UPDATE dbcrypt_sealed_store SET current_key = ? WHERE name = ?", [Int64(id), self.name])
            let others = keys.dataKeys.ids.compactMap { keys.dataKeys.key($0) }
            return try keys.with(dataKeys: try SealingKeySet(current: key, others: others))
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
    ///   or ``SealError/storeDamaged(reason:)`` for an entry that was altered
    ///   (it is left as it is), and the ``DatabaseError`` of the writes.
    public func finishRotation(progress: (@Sendable (JobProgress) -> Void)? = nil, cancellation: JobCancellation? = nil) throws {
        let total = try entriesUnderOlderKeys()
        var done = 0
        progress?(JobProgress(completed: 0, total: total))
        // Through the whole store in the order of its primary key, a batch
        // per transaction: entries written meanwhile are sealed with the
        // current key already.
        var after = Data()
        while true {
            if cancellation?.isCancelled == true { throw DatabaseError.cancelled }
            let (resealed, last): (Int, Data?) = try writer.write { db in
                let keys = try self.reloadKeys(db)
                let current = keys.dataKeys.current.id
                let cursor = try db.cachedStatement(
                    "SELECT tag, name, value FROM dbcrypt_sealed_entry WHERE store = ? AND tag > ? ORDER BY tag LIMIT ?")
                    .query(values: self.name, after, Self.rotationBatch)
                var rows: [(tag: Data, name: Data, value: Data)] = []
                while let row = try cursor.next() { rows.append((try row[0], try row[1], try row[2])) }
                var resealed = 0
                for row in rows where try SealedFormat.keyID(of: row.value) != current {
                    let name = try keys.openName(row.name, tag: row.tag)
                    var plaintext = try keys.openEntry(row.value, name: name)
                    defer { plaintext.resetBytes(in: 0..<plaintext.count) }
                    let resealedValue = try plaintext.withUnsafeBytes { try keys.sealEntry($0, name: name) }
                    // The name again too: one stored before names were padded gets padded.
                    try db.cachedStatement("UPDATE dbcrypt_sealed_entry SET value = ?, name = ? WHERE store = ? AND tag = ?")
                        .execute(values: resealedValue, try keys.sealName(name, tag: row.tag), self.name, row.tag)
                    resealed += 1
                }
                if rows.count < Self.rotationBatch {
                    // The end of the store: forget the keys no entry uses.
                    let stillUsed = try db.fetchAll(
                        Data.self, "SELECT DISTINCT substr(value, 2, 4) FROM dbcrypt_sealed_entry WHERE store = ?", [self.name])
                    for id in keys.dataKeys.ids where id != current && !stillUsed.contains(SealedFormat.keyIDBytes(id)) {
                        try db.execute("DELETE FROM dbcrypt_sealed_key WHERE store = ? AND id = ?", [self.name, Int64(id)])
                    }
                }
                return (resealed, rows.count < Self.rotationBatch ? nil : rows.last?.tag)
            }
            done += resealed
            progress?(JobProgress(completed: min(done, total), total: total))
            guard let last else { break }
            after = last
        }
        _ = try writer.read { db in try self.reloadKeys(db) }
    }

    /// Entries sealed again per transaction by a rotation.
    static let rotationBatch = 256
}
