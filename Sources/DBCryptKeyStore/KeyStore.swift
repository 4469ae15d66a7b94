import DBCryptCore

/// A place outside the database that keeps keys under a service and an
/// account name: the Secret Service (``SecretService``), the Linux kernel
/// keyring (``KernelKeyring``), a service's credentials
/// (``ServiceCredentials``).
///
/// ```swift
/// let store = SecretService()
/// let key = try DatabaseKey.loadOrCreate(in: store, service: "com.example.notes", account: "main")
/// let pool = try DatabasePool(path: "notes.db", key: key)
/// ```
///
/// The shape fits the stores not written yet: Apple's Keychain keeps a
/// generic password under `kSecAttrService` and `kSecAttrAccount` (its
/// access group and accessibility class would be the store's own settings,
/// given when it is made), and Android's Keystore keeps a key that wraps
/// the stored one. A store keeps the key's text (``DatabaseKey/withKeyText(_:)``)
/// and reads it back with ``DatabaseKey/init(keyText:)``.
///
/// Implementations never put a key in an error, a log line or a process's
/// arguments.
public protocol KeyStore: Sendable {
    /// The store's name in sentences: "the Secret Service".
    var name: String { get }

    /// How the store names the item of `service` and `account` in
    /// sentences, as its own tools show it; by default `service/account`.
    func itemName(service: String, account: String) -> String

    /// The key kept under `service` and `account`, or nil when there is none.
    ///
    /// - throws: ``KeyStoreError`` when the store cannot be reached, is
    ///   locked, or holds something there that is not a key.
    func loadKey(service: String, account: String) throws -> DatabaseKey?

    /// Keeps `key` under `service` and `account`, replacing what is there.
    ///
    /// - throws: ``KeyStoreError`` when the store cannot be reached, is
    ///   locked, or refuses the write.
    func storeKey(_ key: DatabaseKey, service: String, account: String) throws

    /// Removes the key kept under `service` and `account`; false when there
    /// was none.
    ///
    /// - throws: ``KeyStoreError`` when the store cannot be reached, is
    ///   locked, or refuses the removal.
    func deleteKey(service: String, account: String) throws -> Bool
}

extension KeyStore {
    /// `service/account`.
    public func itemName(service: String, account: String) -> String { "\(service)/\(account)" }
}
