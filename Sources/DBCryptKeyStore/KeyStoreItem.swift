import DBCryptCore

/// One key in a key store, named as a person names it: `SERVICE/ACCOUNT`
/// in the Secret Service, `NAME` in the kernel keyring (the key
/// `dbcrypt:NAME`), or the credential `NAME` (the file NAME in
/// `$CREDENTIALS_DIRECTORY`, read-only). A name the store cannot hold is
/// refused when the item is made, before the store is asked.
///
/// ```swift
/// let item = try KeyStoreItem(keyring: "com.example.notes/main")
/// let (key, created) = try item.loadOrCreate()
/// ```
public struct KeyStoreItem: Sendable {
    /// Which store an item is in.
    public enum Kind: Sendable, Equatable {
        /// The Secret Service (``SecretService``).
        case secretService
        /// The Linux kernel keyring (``KernelKeyring``).
        case kernelKeyring
        /// A service's credentials (``ServiceCredentials``).
        case credential

        /// The store's name in sentences.
        var storeName: String {
            switch self {
            case .secretService: "the Secret Service"
            case .kernelKeyring: "the kernel keyring"
            case .credential: "the service credentials"
            }
        }
    }

    /// Which store the item is in.
    public let kind: Kind
    /// The store that keeps the key.
    public let store: any KeyStore
    /// The service the store keeps the key under.
    public let service: String
    /// The account the store keeps the key under.
    public let account: String

    /// The item `SERVICE/ACCOUNT` in the Secret Service; a key made there
    /// gets `label` (by default ``SecretService``'s).
    ///
    /// - throws: ``KeyInputError/malformedItemName(_:name:)`` for a name
    ///   without a service or an account; ``KeyInputError/itemNameTooLong(_:name:limit:)``
    ///   past 4096 bytes.
    public init(keyring: String, label: String? = nil) throws(KeyInputError) {
        guard let slash = keyring.firstIndex(of: "/"), slash != keyring.startIndex, keyring.index(after: slash) != keyring.endIndex else {
            throw .malformedItemName(.secretService, name: keyring)
        }
        try Self.requireLength(keyring, atMost: 4096, .secretService)
        (kind, service, account) = (.secretService, String(keyring[..<slash]), String(keyring[keyring.index(after: slash)...]))
        store = label.map { SecretService(label: $0) } ?? SecretService()
    }

    /// The key `dbcrypt:NAME` in the kernel keyring (Linux only).
    ///
    /// - throws: ``KeyInputError/malformedItemName(_:name:)`` for an empty
    ///   name; ``KeyInputError/itemNameTooLong(_:name:limit:)`` past 4087
    ///   bytes; ``KeyInputError/storeUnsupported(_:)`` off Linux.
    public init(kernelKeyring name: String) throws(KeyInputError) {
        guard !name.isEmpty else { throw .malformedItemName(.kernelKeyring, name: name) }
        // The kernel keeps descriptions of at most 4095 bytes: "dbcrypt:" and the NAME.
        try Self.requireLength(name, atMost: 4087, .kernelKeyring)
        #if os(Linux)
        (kind, store, service, account) = (.kernelKeyring, KernelKeyring(), "dbcrypt", name)
        #else
        throw .storeUnsupported(.kernelKeyring)
        #endif
    }

    /// The service credential `NAME` (systemd's `LoadCredential=`), which
    /// may only be read.
    ///
    /// - throws: ``KeyInputError/malformedItemName(_:name:)`` for a name
    ///   that is not a file name (empty, `.`, `..`, or with a `/`);
    ///   ``KeyInputError/itemNameTooLong(_:name:limit:)`` past 255 bytes.
    public init(credential name: String) throws(KeyInputError) {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw .malformedItemName(.credential, name: name)
        }
        try Self.requireLength(name, atMost: 255, .credential)
        (kind, store, service, account) = (.credential, ServiceCredentials(), "", name)
    }

    /// Refuses a name longer than its store can hold.
    private static func requireLength(_ name: String, atMost bytes: Int, _ kind: Kind) throws(KeyInputError) {
        guard name.utf8.count > bytes else { return }
        throw .itemNameTooLong(kind, name: name, limit: bytes)
    }

    /// Whether a missing key may be made there: credentials are the service
    /// manager's to write.
    public var canCreate: Bool { kind != .credential }

    /// The item's name as its store shows it: `service/account`, `dbcrypt:NAME`.
    public var name: String { store.itemName(service: service, account: account) }

    /// The key kept there.
    ///
    /// - throws: ``KeyStoreError/notFound(store:item:)`` when there is none;
    ///   any other ``KeyStoreError`` the store meets.
    public func load() throws -> DatabaseKey {
        try DatabaseKey.load(from: store, service: service, account: account)
    }

    /// The key kept there, or (where keys may be made, ``canCreate``) a new
    /// random one made and kept there now (``DatabaseKey/loadOrCreate(in:service:account:)``),
    /// and whether it was made now: a caller whose work then fails may
    /// ``delete()`` it again.
    ///
    /// - throws: ``KeyStoreError`` when the store cannot be reached, is
    ///   locked or refuses the write, holds something that is not a key, or
    ///   (where none may be made) holds no key.
    public func loadOrCreate() throws -> (key: DatabaseKey, created: Bool) {
        guard canCreate else { return (try load(), false) }
        var created = false
        let key = try DatabaseKey.loadOrCreate(in: store, service: service, account: account, created: &created)
        return (key, created)
    }

    /// A new random raw key kept there, where there must be none yet
    /// (``DatabaseKey/create(in:service:account:)``).
    ///
    /// - throws: ``KeyStoreError/alreadyExists(store:item:)`` when the store
    ///   holds one; any other ``KeyStoreError`` the store meets.
    @discardableResult
    public func create() throws -> DatabaseKey {
        try DatabaseKey.create(in: store, service: service, account: account)
    }

    /// Removes the key kept there.
    ///
    /// - throws: ``KeyStoreError/notFound(store:item:)`` when there is none;
    ///   any other ``KeyStoreError`` the store meets.
    public func delete() throws {
        try DatabaseKey.delete(from: store, service: service, account: account)
    }

    /// For an item in the kernel keyring, which forgets its keys when the
    /// machine restarts, a sentence saying so and how to keep a copy (with
    /// `keyctl`); nil for the stores that keep keys.
    public var forgottenAtRestartNote: String? {
        guard kind == .kernelKeyring else { return nil }
        return "The kernel keyring forgets the key \(name) when the machine restarts: keep a copy somewhere lasting, readable by you alone: (umask 077; keyctl pipe %user:\(name) > FILE)."
    }
}
