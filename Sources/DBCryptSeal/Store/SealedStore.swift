import DBCrypt
import Foundation
import Synchronization

/// An encrypted key-value store in a table of any DBCrypt database (an
/// encrypted file or not): every value sealed with AES-256-GCM, bound to
/// its store and its entry's name (a value copied to another entry or store
/// does not open), every name sealed deterministically so that it is not
/// readable in the file but can still be looked up and listed. (The store's
/// *keys* are its cryptographic keys; what a value is stored for is its *name*.)
///
/// ```swift
/// let queue = try DatabaseQueue(path: "app.db", key: .passphrase(databaseSecret))
/// let store = try SealedStore(queue, credential: .passphrase(storeSecret))
/// try store.set("s3cr3t-token", for: "api.token")
/// let token = try store.getString("api.token")
/// ```
///
/// **Keys the user does not manage.** A new store draws a random salt and
/// keeps it, with its key derivation's parameters (Argon2id by default), in
/// its header row: none of it is secret. The passphrase gives a
/// key-encryption key, which wraps the store's data keys; a wrong
/// passphrase is an error when the store opens. Changing the passphrase
/// re-wraps the keys, at once, whatever the number of entries; rotating the
/// data key re-seals every entry, resumably (see ``rotateDataKey(progress:cancellation:)``).
///
/// Listing names (``names(withPrefix:)``) opens every entry name of the store:
/// it costs time in proportion to the store's size.
public final class SealedStore: Sendable {
    /// The store's name in its database.
    public let name: String
    @usableFromInline let writer: any DatabaseWriter
    private let storedKeys: Mutex<StoreKeys>

    /// Opens the store `name` of the database behind `writer`, or creates it
    /// when it is missing and `create` is true: with `keyDerivation` and a
    /// new random salt for a passphrase, a random data key and name key.
    ///
    /// `initialWrite`, when given, runs once with the store's entries: in
    /// the transaction that creates the store, when this call creates it, so
    /// that a store is never left made but empty by a write that failed or
    /// a process that was killed; else in a write transaction of its own.
    ///
    /// - throws: ``SealError/wrongCredential(reason:)``, ``SealError/noSuchStore(name:)``,
    ///   ``SealError/storeDamaged(reason:)``, ``SealError/invalidKeyDerivation(reason:)``,
    ///   what `initialWrite` throws (nothing is created then), and the
    ///   ``DatabaseError`` of the database (a read-only database cannot
    ///   create a store).
    public init(
        _ writer: some DatabaseWriter, name: String = "default", credential: StoreCredential,
        create: Bool = true, keyDerivation: KeyDerivation = .argon2idDefault,
        initialWrite: ((Entries) throws -> Void)? = nil
    ) throws {
        self.name = name
        self.writer = writer
        if let header = try writer.read({ db in try StoreSchema.header(db, store: name) }) {
            storedKeys = Mutex(try Self.open(header, credential: credential, writer: writer, store: name))
        } else {
            guard create else { throw SealError.noSuchStore(name: name) }
            try keyDerivation.validate()
            // Derived outside the write transaction: it takes a while.
            let storeID = StoreSchema.random16()
            let salt: Data? = if case .passphrase = credential { StoreSchema.random16() } else { nil }
            let kdf: KeyDerivation? = salt == nil ? nil : keyDerivation
            let kek = try StoreKeys.keyEncryptionKey(credential, kdf: kdf, salt: salt)
            let (nameKey, wrappedNameKey) = try StoreKeys.newWrappedKey(kek: kek, context: StoreKeys.nameKeyContext(storeID), id: 0)
            let (dataKey, wrappedDataKey) = try StoreKeys.newWrappedKey(kek: kek, context: StoreKeys.dataKeyContext(storeID, 1), id: 1)
            let kdfText = try StoreSchema.kdfText(kdf)
            storedKeys = Mutex(try StoreKeys(storeID: storeID, kek: kek, nameKey: nameKey.secret, dataKeys: try SealingKeySet(current: dataKey)))
            let made: Bool = try writer.write { db in
                try db.execute(StoreSchema.create)
                // Another connection (another process) made it meanwhile, with
                // its own salt: it is opened below, with a key derived from that salt.
                if try StoreSchema.header(db, store: name) != nil { return false }
                try db.execute("""
                    INSERT INTO dbcrypt_sealed_store(name, format, store_id, kdf, salt, name_key, current_key)
                    VALUES (?, ?, ?, ?, ?, ?, 1)
                    """, [name, StoreSchema.format, storeID, kdfText, salt, wrappedNameKey])
                try db.execute("INSERT INTO dbcrypt_sealed_key(store, id, wrapped) VALUES (?, 1, ?)", [name, wrappedDataKey])
                try initialWrite?(self.entries(in: db))
                return true
            }
            if made { return }
            guard let header = try writer.read({ db in try StoreSchema.header(db, store: name) }) else {
                throw SealError.noSuchStore(name: name)
            }
            replaceKeys(try Self.open(header, credential: credential, writer: writer, store: name))
        }
        if let initialWrite { try writer.write { db in try initialWrite(self.entries(in: db)) } }
    }

    /// Whether the database behind `reader` has a store named `name`.
    ///
    /// - throws: ``SealError/storeDamaged(reason:)``, and the ``DatabaseError`` of the read.
    public static func exists(_ name: String, in reader: some DatabaseReader) throws -> Bool {
        try reader.read { db in try StoreSchema.header(db, store: name) != nil }
    }

    /// The keys of the store whose header was `header`. The derivation takes
    /// a while, during which another process may rotate the data key (and
    /// retire the one `header` names current) or change the passphrase: so
    /// the keys are read with the header again, in one snapshot, and the
    /// key derived again when the salt changed meanwhile.
    private static func open(_ header: StoreSchema.Header, credential: StoreCredential, writer: some DatabaseWriter, store: String) throws -> StoreKeys {
        var derivedFor = header
        for _ in 0..<8 {
            let kek = try StoreKeys.keyEncryptionKey(credential, kdf: derivedFor.kdf, salt: derivedFor.salt)
            let (opened, now): (StoreKeys?, StoreSchema.Header) = try writer.read { db in
                guard let now = try StoreSchema.header(db, store: store) else { throw SealError.noSuchStore(name: store) }
                guard now.salt == derivedFor.salt && now.kdf == derivedFor.kdf else { return (nil, now) }
                return (try Self.keys(now, kek: kek, db: db, store: store), now)
            }
            if let opened { return opened }
            derivedFor = now
        }
        throw SealError.wrongCredential(reason: "store \"\(store)\" changed its passphrase again and again while it was being opened")
    }

    /// Whether `credential` opens the store now; after a
    /// ``changeCredential(to:keyDerivation:)`` that threw, whether the change
    /// was made after all. Derives the key, so takes as long as opening.
    ///
    /// - throws: what reading the store throws (``SealError/storeDamaged(reason:)``,
    ///   the ``DatabaseError`` of the read): then whether it opens is not known.
    public func opens(with credential: StoreCredential) throws -> Bool {
        guard let header = try writer.read({ db in try StoreSchema.header(db, store: self.name) }) else { return false }
        do {
            _ = try Self.open(header, credential: credential, writer: writer, store: name)
            return true
        } catch SealError.wrongCredential {
            return false
        }
    }

    /// Unwraps the name key and every data key of `header`'s store with `kek`.
    static func keys(_ header: StoreSchema.Header, kek: SealingKey, db: Database, store: String) throws -> StoreKeys {
        let nameKey = try StoreKeys.unwrap(header.wrappedNameKey, kek: kek, context: StoreKeys.nameKeyContext(header.storeID), id: 0)
        var dataKeys: [SealingKey] = []
        for (id, wrapped) in try StoreSchema.wrappedKeys(db, store: store) {
            dataKeys.append(try StoreKeys.unwrap(wrapped, kek: kek, context: StoreKeys.dataKeyContext(header.storeID, id), id: id))
        }
        guard let current = dataKeys.first(where: { $0.id == header.currentKey }) else {
            throw SealError.storeDamaged(reason: "store \"\(store)\" has no data key \(header.currentKey), its current one")
        }
        return try StoreKeys(storeID: header.storeID, kek: kek, nameKey: nameKey.secret,
                         dataKeys: try SealingKeySet(current: current, others: dataKeys.filter { $0.id != current.id }))
    }

    /// The keys now (another thread's rotation may replace them).
    var keys: StoreKeys {
        storedKeys.withLock { $0 }
    }

    /// Puts `keys` in place of the store's keys.
    func replaceKeys(_ keys: StoreKeys) {
        storedKeys.withLock { $0 = keys }
    }

    /// Reads the data keys again: another connection rotated them.
    func reloadKeys(_ db: Database) throws -> StoreKeys {
        // The header and the keys, from one snapshot (a get reads without a transaction).
        let reloaded = try db.isInsideTransaction ? readKeys(db) : db.inTransaction(.deferred) { try readKeys($0) }
        replaceKeys(reloaded)
        return reloaded
    }

    private func readKeys(_ db: Database) throws -> StoreKeys {
        guard let header = try StoreSchema.header(db, store: name) else { throw SealError.noSuchStore(name: name) }
        return try Self.keys(header, kek: keys.kek, db: db, store: name)
    }

    // MARK: - Reading

    /// The value of `name`, or nil when the store has none.
    ///
    /// - throws: ``SealError/authenticationFailed`` when the stored value was
    ///   altered or moved from another entry, and the ``DatabaseError`` of the read.
    public func get(_ name: String) throws -> Data? {
        try writer.unsafeRead { db in try self.entries(in: db).get(name) }
    }

    /// The value of `name` as UTF-8 text; see ``get(_:)``.
    ///
    /// - throws: as ``get(_:)``, and ``SealError/notUTF8``.
    public func getString(_ name: String) throws -> String? {
        try writer.unsafeRead { db in try self.entries(in: db).getString(name) }
    }

    /// The value of `name` decoded as `type`; see ``get(_:)``.
    ///
    /// - throws: as ``get(_:)``, and ``SealError/coding(reason:)``.
    public func get<Value: Decodable>(_ type: Value.Type, _ name: String) throws -> Value? {
        try writer.unsafeRead { db in try self.entries(in: db).get(type, name) }
    }

    /// Whether the store has a value for `name`.
    ///
    /// - throws: the ``DatabaseError`` of the read.
    public func contains(_ name: String) throws -> Bool {
        try writer.unsafeRead { db in try self.entries(in: db).contains(name) }
    }

    /// Every entry name that starts with `prefix`, sorted. Opens every
    /// entry name of the store.
    ///
    /// - throws: ``SealError/authenticationFailed`` for an entry name that was
    ///   altered, and the ``DatabaseError`` of the read.
    public func names(withPrefix prefix: String = "") throws -> [String] {
        try writer.read { db in try self.entries(in: db).names(withPrefix: prefix) }
    }

    // MARK: - Writing

    /// Seals `value` under the current data key and stores it for `name`,
    /// replacing any value it had.
    ///
    /// - throws: the ``DatabaseError`` of the write.
    @inlinable
    public func set(_ value: some DataProtocol & Sendable, for name: String) throws {
        try writer.write { db in try self.entries(in: db).set(value, for: name) }
    }

    /// Stores the UTF-8 bytes of `value`, in a write transaction of its own;
    /// see ``set(_:for:)-(some DataProtocol & Sendable,_)``.
    public func set(_ value: String, for name: String) throws {
        try writer.write { db in try self.entries(in: db).set(value, for: name) }
    }

    /// Stores `value` encoded as JSON; see ``set(_:for:)-(some DataProtocol & Sendable,_)``.
    ///
    /// - throws: ``SealError/coding(reason:)``, and the ``DatabaseError`` of the write.
    public func set<Value: Encodable>(encoding value: Value, for name: String) throws {
        try set(SealingKey.encode(value), for: name)
    }

    /// Removes the value of `name`; returns whether there was one.
    ///
    /// - throws: the ``DatabaseError`` of the write.
    @discardableResult
    public func remove(_ name: String) throws -> Bool {
        try writer.write { db in try self.entries(in: db).remove(name) }
    }

    /// Runs `body` in one write transaction: every change it makes through
    /// its ``Entries`` is committed together, or none is.
    ///
    /// ```swift
    /// try store.batch { entries in
    ///     try entries.set("a", for: "first")
    ///     try entries.remove("second")
    /// }
    /// ```
    /// - throws: what `body` throws, and the ``DatabaseError`` of the transaction.
    public func batch<T>(_ body: (Entries) throws -> T) throws -> T {
        try writer.write { db in try body(self.entries(in: db)) }
    }

    /// The store's entries through `db`, inside a transaction of the
    /// caller's (a queue's or pool's `write` closure), so that entries
    /// change together with the caller's own tables.
    public func entries(in db: Database) -> Entries { Entries(store: self, db: db) }

    // MARK: - Observation

    /// The value of `name` as an `AsyncSequence`: at once, then after each
    /// commit that changes the store (a value equal to the last one is not
    /// delivered again). Ends when the iterating task is cancelled.
    public func observe(_ name: String) -> AsyncThrowingStream<Data?, Error> {
        writer.observe(removingDuplicates: true, checkingOtherProcessesEvery: nil) { db in try self.entries(in: db).get(name) }
    }
}

extension SealedStore {
    /// A store's entries through one `Database`, inside its transaction.
    /// Made by ``SealedStore/entries(in:)`` and ``SealedStore/batch(_:)``;
    /// used on that connection's thread only, within the transaction it was
    /// made in.
    public struct Entries {
        let store: SealedStore
        let db: Database
        /// The keys checked against the store's current data key in this
        /// transaction, after the first write.
        private let checked = CheckedKeys()

        init(store: SealedStore, db: Database) {
            self.store = store
            self.db = db
        }

        /// The value of `name`, or nil; see ``SealedStore/get(_:)``.
        public func get(_ name: String) throws -> Data? {
            let keys = store.keys
            let cursor = try db.cachedStatement("SELECT value FROM dbcrypt_sealed_entry WHERE store = ? AND tag = ?")
                .query(values: store.name, try keys.tag(name))
            guard let row = try cursor.next() else { return nil }
            let sealed: Data = try row[0]
            do {
                return try keys.openEntry(sealed, name: name)
            } catch SealError.wrongKey {
                // Sealed under a key another connection added since: read the keys again.
                return try store.reloadKeys(db).openEntry(sealed, name: name)
            }
        }

        /// The value of `name` as UTF-8 text; see ``SealedStore/getString(_:)``.
        public func getString(_ name: String) throws -> String? {
            guard let data = try get(name) else { return nil }
            guard let text = String(data: data, encoding: .utf8) else { throw SealError.notUTF8 }
            return text
        }

        /// The value of `name` decoded as `type`; see ``SealedStore/get(_:_:)``.
        public func get<Value: Decodable>(_ type: Value.Type, _ name: String) throws -> Value? {
            try get(name).map { try SealingKey.decode(type, from: $0) }
        }

        /// Whether `name` has a value.
        public func contains(_ name: String) throws -> Bool {
            try db.cachedStatement("SELECT 1 FROM dbcrypt_sealed_entry WHERE store = ? AND tag = ?")
                .query(values: store.name, try store.keys.tag(name)).next() != nil
        }

        /// Every entry name starting with `prefix`, sorted; see ``SealedStore/names(withPrefix:)``.
        public func names(withPrefix prefix: String = "") throws -> [String] {
            let keys = store.keys
            let cursor = try db.cachedStatement("SELECT tag, name FROM dbcrypt_sealed_entry WHERE store = ?").query(values: store.name)
            var names: [String] = []
            while let row = try cursor.next() {
                let name = try keys.openName(try row[1], tag: try row[0])
                if name.hasPrefix(prefix) { names.append(name) }
            }
            return names.sorted()
        }

        /// Stores `value` for `name`; see ``SealedStore/set(_:for:)-(some DataProtocol & Sendable,_)``.
        @inlinable
        public func set(_ value: some DataProtocol, for name: String) throws {
            try withContiguousBytes(value) { try set(bytes: $0, for: name) }
        }

        /// Stores `value` for `name` (the work of the generic `set`).
        @usableFromInline
        func set(bytes value: UnsafeRawBufferPointer, for name: String) throws {
            let keys = try keysForWriting()
            let tag = try keys.tag(name)
            let sealed = try keys.sealEntry(value, name: name)
            // The name is written again too: one stored before names were padded gets padded.
            let sealedName = try keys.sealName(name, tag: tag)
            try db.cachedStatement("UPDATE dbcrypt_sealed_entry SET value = ?, name = ? WHERE store = ? AND tag = ?")
                .execute(values: sealed, sealedName, store.name, tag)
            if db.changes == 0 {
                try db.cachedStatement("INSERT INTO dbcrypt_sealed_entry(store, tag, name, value) VALUES (?, ?, ?, ?)")
                    .execute(values: store.name, tag, sealedName, sealed)
            }
        }

        /// Stores the UTF-8 bytes of `value`.
        public func set(_ value: String, for name: String) throws {
            try set(Data(value.utf8), for: name)
        }

        /// Stores `value` encoded as JSON.
        public func set<Value: Encodable>(encoding value: Value, for name: String) throws {
            try set(SealingKey.encode(value), for: name)
        }

        /// Removes the value of `name`; returns whether there was one.
        @discardableResult
        public func remove(_ name: String) throws -> Bool {
            try db.cachedStatement("DELETE FROM dbcrypt_sealed_entry WHERE store = ? AND tag = ?")
                .execute(values: store.name, try store.keys.tag(name))
            return db.changes > 0
        }

        /// The keys to seal with: another connection may have rotated the
        /// data key (and retired this one), so the store's current key is
        /// read once per transaction, before the first write.
        private func keysForWriting() throws -> StoreKeys {
            if let keys = checked.keys, db.isInsideTransaction { return keys }
            var keys = store.keys
            let current = try StoreSchema.currentKey(db, store: store.name)
            if current != Int64(keys.dataKeys.current.id) { keys = try store.reloadKeys(db) }
            if db.isInsideTransaction { checked.keys = keys }
            return keys
        }
    }

    /// The keys an ``Entries`` value checked for writing.
    final class CheckedKeys {
        var keys: StoreKeys?
    }
}
