import ArgumentParser
import DBCrypt
import DBCryptKeyStore
import Foundation

/// One key in a key store, as the command line names it:
/// `--keyring SERVICE/ACCOUNT` (the Secret Service), `--kernel-keyring NAME`
/// (the kernel key `dbcrypt:NAME`), `--credential NAME` (the file NAME in
/// `$CREDENTIALS_DIRECTORY`, read-only).
struct KeyStoreItem {
    let store: any KeyStore
    let service: String
    let account: String
    /// Whether a missing key may be made there (credentials are the service manager's to write).
    let canCreate: Bool

    /// The item one of the three options names (at most one is given), or
    /// nil for none. The options are `--<prefix>keyring`,
    /// `--<prefix>kernel-keyring` and `--<prefix>credential`, as errors name them.
    ///
    /// - throws: `ValidationError` for a name that option does not take.
    init?(keyring: String?, kernelKeyring: String?, credential: String?, prefix: String) throws {
        let options = (keyring: "--\(prefix)keyring", kernel: "--\(prefix)kernel-keyring", credential: "--\(prefix)credential")
        if let keyring {
            guard let slash = keyring.firstIndex(of: "/"), slash != keyring.startIndex, keyring.index(after: slash) != keyring.endIndex else {
                throw ValidationError("\(options.keyring) takes SERVICE/ACCOUNT (say dbcrypt/app), not \(displayed(keyring, limit: 64))")
            }
            try Self.requireLength(keyring, atMost: 4096, option: options.keyring, what: "SERVICE/ACCOUNT")
            store = SecretService(label: "dbcrypt key \(keyring)")
            (service, account, canCreate) = (String(keyring[..<slash]), String(keyring[keyring.index(after: slash)...]), true)
        } else if let kernelKeyring {
            guard !kernelKeyring.isEmpty else { throw ValidationError("\(options.kernel) takes a NAME") }
            // The kernel keeps descriptions of at most 4095 bytes: "dbcrypt:" and the NAME.
            try Self.requireLength(kernelKeyring, atMost: 4087, option: options.kernel, what: "NAME")
            #if os(Linux)
            store = KernelKeyring()
            (service, account, canCreate) = ("dbcrypt", kernelKeyring, true)
            #else
            throw ValidationError("\(options.kernel): the kernel keyring is Linux's; use \(options.keyring)")
            #endif
        } else if let credential {
            guard !credential.isEmpty, !credential.contains("/"), credential != ".", credential != ".." else {
                throw ValidationError("\(options.credential) takes the credential's NAME (its file name in $CREDENTIALS_DIRECTORY), not \(displayed(credential, limit: 64))")
            }
            try Self.requireLength(credential, atMost: 255, option: options.credential, what: "NAME (a file name)")
            (store, service, account, canCreate) = (ServiceCredentials(), "", credential, false)
        } else {
            return nil
        }
    }

    /// Refuses a name longer than its store can hold, in one line that
    /// quotes only its start.
    ///
    /// - throws: `ValidationError` (a usage error).
    private static func requireLength(_ name: String, atMost bytes: Int, option: String, what: String) throws {
        guard name.utf8.count > bytes else { return }
        throw ValidationError("\(option) takes a \(what) of at most \(bytes) bytes, not one of \(name.utf8.count): \(displayed(name, limit: 32))")
    }

    /// The item's name as its store shows it.
    var name: String { store.itemName(service: service, account: account) }

    /// The key kept there.
    func load() throws -> DatabaseKey {
        try DatabaseKey.load(from: store, service: service, account: account)
    }

    /// The key kept there, or (where keys may be made) a new random one
    /// made and kept there now, which a failed run removes again
    /// (``NewKey/using(inUse:_:)``).
    func loadOrCreate() throws -> NewKey {
        guard canCreate else { return NewKey(key: try load(), madeIn: nil) }
        var created = false
        let key = try DatabaseKey.loadOrCreate(in: store, service: service, account: account, created: &created)
        if created { warnIfForgotten() }
        return NewKey(key: key, madeIn: created ? self : nil)
    }

    /// Says on stderr, for a key just made in the kernel keyring, that the
    /// keyring forgets it at the next restart, and how to keep a copy.
    func warnIfForgotten() {
        #if os(Linux)
        guard store is KernelKeyring else { return }
        printError("The kernel keyring forgets the key \(name) when the machine restarts: keep a copy somewhere lasting, readable by you alone: (umask 077; keyctl pipe %user:\(name) > FILE).")
        #endif
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

/// A key for data a command is about to encrypt (a database, a sealed
/// store); made in its store when the store was named and held none yet.
struct NewKey {
    let key: DatabaseKey
    /// The store's item, when the key was made there by this run.
    let madeIn: KeyStoreItem?

    /// The key from `item` (made there when missing), else the one `read` gives.
    static func from(_ item: KeyStoreItem?, orElse read: () throws -> DatabaseKey) throws -> NewKey {
        if let item { return try item.loadOrCreate() }
        return NewKey(key: try read(), madeIn: nil)
    }

    /// Runs `body` with the key; when it fails, a key this run made is
    /// removed again, unless `inUse` says the data is encrypted with it
    /// after all (a failure after the new file was put in place).
    func using<R>(inUse: @escaping (DatabaseKey) -> Bool, _ body: (DatabaseKey) throws -> R) throws -> R {
        try removingOnFailure(madeIn, inUse: { inUse(key) }) { try body(key) }
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
