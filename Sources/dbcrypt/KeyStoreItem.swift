import ArgumentParser
import DBCrypt
import DBCryptKeyStore
import Foundation

/// One key in a key store, as the command line names it:
/// `--keyring SERVICE/ACCOUNT` (the Secret Service), `--kernel-keyring NAME`
/// (the kernel key `dbcrypt:NAME`), `--credential NAME` (the file NAME in
/// `$CREDENTIALS_DIRECTORY`).
struct KeyStoreItem {
    let store: any KeyStore
    let service: String
    let account: String

    /// The item one of the three options names (at most one is given), or
    /// nil for none. `options` are the three options' names, for errors.
    init?(keyring: String?, kernelKeyring: String?, credential: String?,
          options: (keyring: String, kernel: String, credential: String)) throws {
        if let keyring {
            guard let slash = keyring.firstIndex(of: "/"), slash != keyring.startIndex, keyring.index(after: slash) != keyring.endIndex else {
                throw ValidationError("\(options.keyring) takes SERVICE/ACCOUNT (say dbcrypt/app), not \(keyring)")
            }
            (store, service, account) = (SecretService(label: "dbcrypt key \(keyring)"), String(keyring[..<slash]), String(keyring[keyring.index(after: slash)...]))
        } else if let kernelKeyring {
            guard !kernelKeyring.isEmpty else { throw ValidationError("\(options.kernel) takes a NAME") }
            (store, service, account) = (KernelKeyring(), "dbcrypt", kernelKeyring)
        } else if let credential {
            (store, service, account) = (ServiceCredentials(), "", credential)
        } else {
            return nil
        }
    }

    /// The item's name as its store shows it.
    var name: String { store.itemName(service: service, account: account) }

    /// The key kept there.
    func load() throws -> DatabaseKey {
        try DatabaseKey.load(from: store, service: service, account: account)
    }

    /// The key kept there, or a new random one made and kept there now;
    /// whether it was made now (so that a failed run can remove it again).
    func loadOrCreate() throws -> (key: DatabaseKey, made: Bool) {
        do {
            return (try load(), false)
        } catch KeyStoreError.notFound {
            do {
                return (try DatabaseKey.create(in: store, service: service, account: account), true)
            } catch KeyStoreError.alreadyExists {
                return (try load(), false)   // another process made it meanwhile
            }
        }
    }

    /// Removes the key a failed run made, saying so on stderr; a failure to
    /// remove it is said too, and does not hide the run's own error.
    func discardMadeKey() {
        do {
            try DatabaseKey.delete(from: store, service: service, account: account)
            printError("The key made for this run was removed from \(store.name) again (\(name)).")
        } catch {
            printError("The key made for this run could not be removed from \(store.name) (\(name)): \(error)")
        }
    }
}

/// A key for a database that a command is about to encrypt; made in its
/// store when the store was named and holds none yet.
struct NewDatabaseKey {
    let key: DatabaseKey
    /// The store's item, when the key was made there by this run.
    let madeIn: KeyStoreItem?

    /// Runs `body` with the key; when it fails, a key this run made is removed again.
    func using<R>(_ body: (DatabaseKey) throws -> R) throws -> R {
        do {
            return try body(key)
        } catch {
            madeIn?.discardMadeKey()
            throw error
        }
    }
}
