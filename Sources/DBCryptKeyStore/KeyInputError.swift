import DBCryptCore

/// Why a key could not be read where it was said to be (``KeyInput``), or
/// a key store's item cannot be named so (``KeyStoreItem``). Never holds a
/// key. `source` is where the key was to come from, as
/// ``KeyInput/description`` says it.
public enum KeyInputError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The environment variable is not set.
    case notSet(variable: String)
    /// No key was given, and the process has no terminal to ask on.
    case noTerminal
    /// The text holds no key (at most a newline).
    case empty(source: String)
    /// The text starts as a raw key (`x'`) without being one.
    case malformedRawKey(source: String)
    /// The key typed twice on the terminal was not the same twice.
    case keysDiffer
    /// The text is longer than ``KeyInput/limit``: more than any key.
    case tooLong(source: String)
    /// The file cannot be read: the system's reason.
    case unreadable(source: String, reason: String)
    /// A name the store does not take: a Secret Service item is
    /// `SERVICE/ACCOUNT`, a kernel keyring's has a name, a credential's is
    /// a file name.
    case malformedItemName(KeyStoreItem.Kind, name: String)
    /// A name longer than the store holds: at most `limit` bytes in UTF-8.
    case itemNameTooLong(KeyStoreItem.Kind, name: String, limit: Int)
    /// The store does not exist on this platform (the kernel keyring off Linux).
    case storeUnsupported(KeyStoreItem.Kind)

    /// One sentence: what is wrong and what to do next.
    public var description: String {
        switch self {
        case let .notSet(variable):
            "The environment variable \(variable) is not set: put the key in it."
        case .noTerminal:
            "No key given, and there is no terminal to ask on: give it in an environment variable, a file or a key store."
        case let .empty(source):
            "The key in \(source) is empty."
        case let .malformedRawKey(source):
            "The raw key in \(source) is malformed: write x' then 64 hex digits (or 96 with the salt) then '."
        case .keysDiffer:
            "The two keys differ: nothing was changed."
        case let .tooLong(source):
            "\(source.capitalizedFirst) holds more than 64 KiB, far more than any key: check that it names the key."
        case let .unreadable(source, reason):
            "Cannot read \(source): \(reason)."
        case let .malformedItemName(.secretService, name):
            "A Secret Service item is named SERVICE/ACCOUNT (say com.example.notes/main), not \(name.prefix(64))."
        case .malformedItemName(.kernelKeyring, _):
            "A kernel keyring item needs a name."
        case let .malformedItemName(.credential, name):
            "A credential is named by its file name in $CREDENTIALS_DIRECTORY, not \(name.prefix(64))."
        case let .itemNameTooLong(kind, name, limit):
            "\(kind.storeName.capitalizedFirst) takes names of at most \(limit) bytes, not one of \(name.utf8.count): \(name.prefix(32))…"
        case let .storeUnsupported(kind):
            "\(kind.storeName.capitalizedFirst) is not on this platform: keep the key in another store."
        }
    }
}

extension KeyInputError: DBCryptError {
    /// ``DBCryptErrorCategory/unsupported`` for a store this platform does
    /// not have; ``DBCryptErrorCategory/misuse`` for the rest: a key given
    /// where there is none, or that is no key.
    public var category: DBCryptErrorCategory {
        if case .storeUnsupported = self { return .unsupported }
        return .misuse
    }
}
