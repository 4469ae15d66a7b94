import CLibSecret
import DBCryptCore

/// The Secret Service: the freedesktop.org API that GNOME Keyring and
/// KWallet serve on a desktop session's D-Bus, through libsecret.
///
/// A key is an item of the default collection (the login keyring) with the
/// attributes `service` and `account` and the key's text as its secret, so
/// `secret-tool lookup service S account A` finds it, and a key another tool
/// stored so is found here. Items are matched on those two attributes alone.
///
/// ```swift
/// let key = try DatabaseKey.loadOrCreate(in: SecretService(), service: "com.example.notes", account: "main")
/// ```
///
/// It protects a key at rest with the user's login password; a process
/// running as the same user while the collection is unlocked can read it.
/// Reading a locked collection asks the desktop to prompt the user; where no
/// prompt can be shown it is ``KeyStoreError/locked(store:)``.
public struct SecretService: KeyStore {
    /// The label new items get, which desktop key managers show.
    public var label: String

    /// The Secret Service of this session's D-Bus (`DBUS_SESSION_BUS_ADDRESS`).
    public init(label: String = "DBCrypt database key") {
        self.label = label
    }

    /// "the Secret Service".
    public var name: String { "the Secret Service" }

    /// The key in the item with these attributes, or nil when there is none.
    ///
    /// - throws: ``KeyStoreError/locked(store:)`` for an item in a locked
    ///   collection that could not be unlocked; ``KeyStoreError/unavailable(store:reason:)``
    ///   when the service cannot be reached; ``KeyStoreError/notAKey(store:item:reason:)``.
    public func loadKey(service: String, account: String) throws -> DatabaseKey? {
        let attributes = dbcrypt_secret_attributes(service, account)
        defer { g_hash_table_unref(attributes) }
        // An item another process makes between the lookup and the search
        // is found unlocked by the search: look it up again.
        for _ in 0..<3 {
            var error: UnsafeMutablePointer<GError>?
            // The lookup unlocks a locked collection where the desktop can ask the user.
            if let value = secret_password_lookupv_binary_sync(dbcrypt_secret_schema(), attributes, nil, &error) {
                defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
                var length = 0
                let bytes = secret_value_get(value, &length)
                return try DatabaseKey.stored(UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : length), store: name,
                                              item: itemName(service: service, account: account))
            }
            if let error { throw failure(error) }
            // Nothing, or an item it could not unlock: a search without the
            // secret tells the two apart (a locked item is found, not read).
            let items = secret_service_search_sync(nil, dbcrypt_secret_schema(), attributes, SECRET_SEARCH_NONE, nil, &error)
            defer { g_list_free_full(items, g_object_unref) }
            if let error { throw failure(error) }
            guard items != nil else { return nil }
            var node = items
            var allLocked = true
            while let item = node?.pointee.data {
                if secret_item_get_locked(item.assumingMemoryBound(to: SecretItem.self)) == 0 { allLocked = false }
                node = node?.pointee.next
            }
            if allLocked { throw KeyStoreError.locked(store: name) }
        }
        throw KeyStoreError.unavailable(store: name, reason: "the item kept changing while it was read")
    }

    /// Keeps `key` in the default collection, replacing an item with the
    /// same attributes there.
    ///
    /// - throws: ``KeyStoreError/locked(store:)``, ``KeyStoreError/unavailable(store:reason:)``
    ///   or ``KeyStoreError/writeRefused(store:reason:)``.
    public func storeKey(_ key: DatabaseKey, service: String, account: String) throws {
        let attributes = dbcrypt_secret_attributes(service, account)
        defer { g_hash_table_unref(attributes) }
        var error: UnsafeMutablePointer<GError>?
        // libsecret copies the text into its own memory, which it wipes.
        let stored = key.withKeyText { text -> gboolean in
            let value = secret_value_new(text.baseAddress?.assumingMemoryBound(to: gchar.self), text.count, "text/plain")
            defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
            return secret_password_storev_binary_sync(dbcrypt_secret_schema(), attributes, SECRET_COLLECTION_DEFAULT, label, value, nil, &error)
        }
        if let error { throw failure(error, writing: true) }
        guard stored != 0 else { throw KeyStoreError.writeRefused(store: name, reason: "the service did not keep the item") }
    }

    /// Removes every item with these attributes; false when there was none.
    ///
    /// - throws: ``KeyStoreError/locked(store:)``, ``KeyStoreError/unavailable(store:reason:)``
    ///   or ``KeyStoreError/writeRefused(store:reason:)``.
    public func deleteKey(service: String, account: String) throws -> Bool {
        let attributes = dbcrypt_secret_attributes(service, account)
        defer { g_hash_table_unref(attributes) }
        var error: UnsafeMutablePointer<GError>?
        let removed = secret_password_clearv_sync(dbcrypt_secret_schema(), attributes, nil, &error)
        if let error { throw failure(error, writing: true) }
        return removed != 0
    }

    /// The typed error for libsecret's `error`, which this frees. A locked
    /// collection is ``KeyStoreError/locked(store:)``; the service saying no
    /// to a write (access denied, not supported, a limit, a remote error) is
    /// ``KeyStoreError/writeRefused(store:reason:)``; anything else (no bus,
    /// no service on it, a bus gone or not answering) is
    /// ``KeyStoreError/unavailable(store:reason:)``.
    private func failure(_ error: UnsafeMutablePointer<GError>, writing: Bool = false) -> KeyStoreError {
        defer { g_error_free(error) }
        if dbcrypt_secret_error_is_locked(error) != 0 { return .locked(store: name) }
        _ = g_dbus_error_strip_remote_error(error)
        let message = String(cString: error.pointee.message)
        return writing && dbcrypt_secret_error_is_refusal(error) != 0
            ? .writeRefused(store: name, reason: message) : .unavailable(store: name, reason: message)
    }
}
