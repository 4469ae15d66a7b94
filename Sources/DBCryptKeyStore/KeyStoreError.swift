import DBCryptCore
import Foundation

/// Why a key store could not give, keep or remove a key. Never holds a key.
public enum KeyStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The store cannot be reached: no session bus, no Secret Service
    /// running, no credentials directory, no kernel keyring. `reason` is the
    /// store's own words.
    case unavailable(store: String, reason: String)
    /// The collection that holds the key is locked, and could not be
    /// unlocked without the user (no prompt could be shown).
    case locked(store: String)
    /// The store holds no key under this service and account.
    case notFound(store: String, item: String)
    /// The store already holds a key there (``DatabaseKey/create(in:service:account:)``).
    case alreadyExists(store: String, item: String)
    /// What the store holds there is not a key: why (never its bytes).
    case notAKey(store: String, item: String, reason: String)
    /// The store refused to keep or remove a key: its own words.
    case writeRefused(store: String, reason: String)
    /// A credential file others may read or change, which cannot be trusted
    /// to be secret: its path and mode.
    case exposed(path: String, mode: UInt16)

    /// One sentence: what is wrong and what to do next.
    public var description: String {
        switch self {
        case let .unavailable(store, reason):
            "\(store.capitalizedFirst) cannot be used here (\(reason)): make it reachable from this process, or keep the key in another store."
        case let .locked(store):
            "\(store.capitalizedFirst) is locked: unlock its collection (log in to the desktop session) and try again."
        case let .notFound(store, item):
            "\(store.capitalizedFirst) holds no key named \(item): create it first, or check the name."
        case let .alreadyExists(store, item):
            "\(store.capitalizedFirst) already holds a key named \(item): load it, or delete it first if no database uses it."
        case let .notAKey(store, item, reason):
            "What \(store) holds under \(item) is not a key (\(reason)): replace it with a key, or check the name."
        case let .writeRefused(store, reason):
            "\(store.capitalizedFirst) refused the change (\(reason)): nothing was changed."
        case let .exposed(path, mode):
            "The credential \(path) may be read or changed by other users (mode \(String(mode, radix: 8))): make it readable by its owner only (chmod 600), or let systemd provide it."
        }
    }
}

extension KeyStoreError: DBCryptError {
    /// What kind of failure this is: ``DBCryptErrorCategory/storage`` for a
    /// store that cannot be reached, is locked or refuses a change,
    /// ``DBCryptErrorCategory/wrongKey`` for an item that is not a key (the
    /// store's wrong key),
    /// ``DBCryptErrorCategory/misuse`` for a credential others may read.
    public var category: DBCryptErrorCategory {
        switch self {
        case .unavailable, .locked, .writeRefused: .storage
        case .notFound: .notFound
        case .alreadyExists: .exists
        case .notAKey: .wrongKey
        case .exposed: .misuse
        }
    }
}

extension String {
    /// The text with its first letter in upper case: a store's name at the start of a sentence.
    package var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}

extension CipherError {
    /// Why the key cannot be used, without the sentence around it.
    var reason: String {
        switch self {
        case let .invalidKey(reason), let .invalidSetting(_, reason): reason
        }
    }
}

extension DatabaseKey {
    /// The key in `text`, as a store holds it; what is not a key is
    /// ``KeyStoreError/notAKey(store:item:reason:)`` naming the item.
    static func stored(_ text: UnsafeRawBufferPointer, store: String, item: String) throws -> DatabaseKey {
        do {
            return try DatabaseKey(keyText: text)
        } catch let error as CipherError {
            throw KeyStoreError.notAKey(store: store, item: item, reason: error.reason)
        }
    }
}
