import DBCryptCore

/// Keys kept in a ``KeyStore``.
extension DatabaseKey {
    /// The key kept in `store` under `service` and `account`.
    ///
    /// ```swift
    /// let key = try DatabaseKey.load(from: SecretService(), service: "com.example.notes", account: "main")
    /// ```
    ///
    /// - throws: ``KeyStoreError/notFound(store:item:)`` when there is none;
    ///   any other ``KeyStoreError`` the store meets.
    public static func load(from store: some KeyStore, service: String, account: String) throws -> DatabaseKey {
        guard let key = try store.loadKey(service: service, account: account) else {
            throw KeyStoreError.notFound(store: store.name, item: store.itemName(service: service, account: account))
        }
        return key
    }

    /// The key kept in `store` under `service` and `account`; on the first
    /// launch, when there is none, a new random raw key with its salt
    /// (``random()``) kept there first. Processes that race on the first
    /// launch end up with one key: the check and the write happen under a
    /// lock that every process of this user takes (``KeyCreationLock``).
    ///
    /// ```swift
    /// let key = try DatabaseKey.loadOrCreate(in: SecretService(), service: "com.example.notes", account: "main")
    /// let queue = try DatabaseQueue(path: "notes.db", key: key)   // no key derivation
    /// ```
    ///
    /// - throws: ``KeyStoreError`` when the store cannot be reached, is
    ///   locked or refuses the write, or holds something that is not a key.
    public static func loadOrCreate(in store: some KeyStore, service: String, account: String) throws -> DatabaseKey {
        var created = false
        return try loadOrCreate(in: store, service: service, account: account, created: &created)
    }

    /// ``loadOrCreate(in:service:account:)``, saying whether the key was made
    /// now: for a command that removes a key it made when it then fails.
    package static func loadOrCreate(in store: some KeyStore, service: String, account: String, created: inout Bool) throws -> DatabaseKey {
        created = false
        if let key = try store.loadKey(service: service, account: account) { return key }
        return try KeyCreationLock.holding(store: store, service: service, account: account) {
            if let key = try store.loadKey(service: service, account: account) { return key }
            created = true
            return try makeAndStore(in: store, service: service, account: account)
        }
    }

    /// A new random raw key with its salt (``random()``), kept in `store`
    /// under `service` and `account`, where there must be none yet.
    ///
    /// - throws: ``KeyStoreError/alreadyExists(store:item:)`` when the store
    ///   holds one there (created by another process meanwhile, say); any
    ///   other ``KeyStoreError`` the store meets.
    public static func create(in store: some KeyStore, service: String, account: String) throws -> DatabaseKey {
        try KeyCreationLock.holding(store: store, service: service, account: account) {
            if try store.loadKey(service: service, account: account) != nil {
                throw KeyStoreError.alreadyExists(store: store.name, item: store.itemName(service: service, account: account))
            }
            return try makeAndStore(in: store, service: service, account: account)
        }
    }

    /// Keeps this key in `store` under `service` and `account`, replacing
    /// the key there: a database that used that one no longer opens with
    /// what the store holds.
    ///
    /// - throws: ``KeyStoreError`` when the store cannot be reached, is
    ///   locked, or refuses the write.
    public func store(in store: some KeyStore, service: String, account: String) throws {
        try store.storeKey(self, service: service, account: account)
    }

    /// Removes the key kept in `store` under `service` and `account`.
    ///
    /// - throws: ``KeyStoreError/notFound(store:item:)`` when there is none;
    ///   any other ``KeyStoreError`` the store meets.
    public static func delete(from store: some KeyStore, service: String, account: String) throws {
        guard try store.deleteKey(service: service, account: account) else {
            throw KeyStoreError.notFound(store: store.name, item: store.itemName(service: service, account: account))
        }
    }

    /// A random key, kept, and what the store then holds: a store that
    /// silently kept nothing is found here, not when a database made with
    /// the key no longer opens; a key another program wrote there meanwhile
    /// (it does not take DBCrypt's lock) is the one every process then uses.
    private static func makeAndStore(in store: some KeyStore, service: String, account: String) throws -> DatabaseKey {
        try store.storeKey(random(), service: service, account: account)
        guard let kept = try store.loadKey(service: service, account: account) else {
            throw KeyStoreError.writeRefused(store: store.name, reason: "it did not keep the key it was given")
        }
        return kept
    }
}
