import ArgumentParser
import DBCrypt
import DBCryptKeyStore
import Foundation

/// One key in a key store, as the command line names it:
/// `--keyring SERVICE/ACCOUNT` (the Secret Service), `--kernel-keyring NAME`
/// (the kernel key `dbcrypt:NAME`), `--credential NAME` (the file NAME in
/// `$CREDENTIALS_DIRECTORY`, read-only).
extension KeyStoreItem {
    /// The item one of the three options names (at most one is given), or
    /// nil for none. The options are `--<prefix>keyring`,
    /// `--<prefix>kernel-keyring` and `--<prefix>credential`, as errors name them.
    ///
    /// - throws: `ValidationError` for a name that option does not take.
    init?(keyring: String?, kernelKeyring: String?, credential: String?, prefix: String) throws {
        let options = (keyring: "--\(prefix)keyring", kernel: "--\(prefix)kernel-keyring", credential: "--\(prefix)credential")
        do throws(KeyInputError) {
            if let keyring {
                self = try KeyStoreItem(keyring: keyring, label: "dbcrypt key \(keyring)")
            } else if let kernelKeyring {
                self = try KeyStoreItem(kernelKeyring: kernelKeyring)
            } else if let credential {
                self = try KeyStoreItem(credential: credential)
            } else {
                return nil
            }
        } catch {
            switch error {
            case let .malformedItemName(.secretService, name):
                throw ValidationError("\(options.keyring) takes SERVICE/ACCOUNT (say dbcrypt/app), not \(displayed(name, limit: 64))")
            case .malformedItemName(.kernelKeyring, _):
                throw ValidationError("\(options.kernel) takes a NAME")
            case let .malformedItemName(.credential, name):
                throw ValidationError("\(options.credential) takes the credential's NAME (its file name in $CREDENTIALS_DIRECTORY), not \(displayed(name, limit: 64))")
            case let .itemNameTooLong(kind, name, limit):
                let (option, what) = switch kind {
                case .secretService: (options.keyring, "SERVICE/ACCOUNT")
                case .kernelKeyring: (options.kernel, "NAME")
                case .credential: (options.credential, "NAME (a file name)")
                }
                throw ValidationError("\(option) takes a \(what) of at most \(limit) bytes, not one of \(name.utf8.count): \(displayed(name, limit: 32))")
            case .storeUnsupported:
                throw ValidationError("\(options.kernel): the kernel keyring is Linux's; use \(options.keyring)")
            default:
                throw error
            }
        }
    }

    /// Says on stderr, for a key just made in the kernel keyring, that the
    /// keyring forgets it at the next restart, and how to keep a copy.
    func warnIfForgotten() {
        if let note = forgottenAtRestartNote { printError(note) }
    }

    /// Removes the key a failed run made, saying so on stderr; a failure to
    /// remove it is said too, and does not hide the run's own error.
    func discardMadeKey() {
        do {
            try delete()
            printError("The key made for this run was removed from \(store.name) again (\(name)).")
        } catch {
            printError("The key made for this run could not be removed from \(store.name) (\(name)): \(error)")
        }
    }
}

/// A key for data a command is about to encrypt (a database, a sealed
/// store); made in its store when the store was named and held none yet.
struct NewKey {
    let key: DatabaseKey
    /// The store's item, when the key was made there by this run.
    let madeIn: KeyStoreItem?

    /// The key from `item` (made there when missing), else the one `read` gives.
    static func from(_ item: KeyStoreItem?, orElse read: () throws -> DatabaseKey) throws -> NewKey {
        if let item { return try NewKey(madeIfMissingIn: item) }
        return NewKey(key: try read(), madeIn: nil)
    }

    /// Runs `body` with the key; when it fails, a key this run made is
    /// removed again, unless `inUse` says the data is encrypted with it
    /// after all (a failure after the new file was put in place).
    func using<R>(inUse: @escaping (DatabaseKey) -> Bool, _ body: (DatabaseKey) throws -> R) throws -> R {
        try removingOnFailure(madeIn, inUse: { inUse(key) }) { try body(key) }
    }
}

extension NewKey {
    /// The key kept in `item`, or (where keys may be made) a new random one
    /// made and kept there now, which a failed run removes again
    /// (``using(inUse:_:)``); stderr says when the store forgets it.
    init(madeIfMissingIn item: KeyStoreItem) throws {
        let (key, created) = try item.loadOrCreate()
        if created { item.warnIfForgotten() }
        self.init(key: key, madeIn: created ? item : nil)
    }
}

/// Runs `body`; when it fails, the key this run made in `made` (if any) is
/// removed again, so that a failed command leaves no key behind, unless
/// `inUse` says the data is encrypted with it: then it stays, and stderr says so.
func removingOnFailure<R>(_ made: KeyStoreItem?, inUse: () -> Bool, _ body: () throws -> R) throws -> R {
    do {
        return try body()
    } catch {
        if let made {
            if inUse() {
                printError("The key made for this run stays in \(made.store.name) (\(made.name)): the data is encrypted with it.")
            } else {
                made.discardMadeKey()
            }
        }
        throw error
    }
}

/// Whether data at `path` may be encrypted with `key` (under `cipher`,
/// the settings the run wrote): after a failed run, whether the key made
/// for it must stay. An empty file, or one that is not encrypted, holds
/// nothing under any key; only a key that fails to open the file is known
/// not to be in use, and any other failure (a busy or damaged file) keeps
/// the key. Only reads.
func opens(_ path: String, with key: DatabaseKey, cipher: CipherSettings) -> Bool {
    guard (try? FileFormat.detect(at: path)) == .notPlaintext else { return false }
    var options = Database.Options()
    options.readOnly = true
    options.create = false
    options.cipher = cipher
    do {
        try Database(path: path, key: key, options: options).close()
        return true
    } catch DatabaseError.wrongKeyOrNotADatabase {
        return false
    } catch {
        return true
    }
}
