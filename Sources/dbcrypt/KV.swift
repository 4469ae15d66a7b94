import ArgumentParser
import DBCrypt
import DBCryptSeal
import Foundation

/// `dbcrypt kv`: the sealed key-value store of a database.
struct KV: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kv",
        abstract: "Read and write the sealed key-value store of a database.",
        discussion: """
            Every value is sealed with AES-256-GCM under the store's data key, which its \
            passphrase unlocks (--store-key-env, --store-key-file, or the terminal), or a key \
            kept in a key store (--store-key-keyring, --store-key-kernel-keyring, \
            --store-key-credential; a new store gets a random key made there); the \
            database's own key is given as for the other commands. Values are read from \
            standard input (set) and written to standard output (get), never taken from \
            arguments. set --create makes the store when the database has none (Argon2id, \
            a new random salt). rotate seals every entry again under a new data key (a \
            rotation that is stopped is finished by the next one); passwd changes the \
            passphrase at once, whatever the store's size.

            Example:
              printf %s "$TOKEN" | dbcrypt kv app.db set api.token --key-env APP_KEY --store-key-env STORE_KEY
              dbcrypt kv app.db get api.token --key-env APP_KEY --store-key-env STORE_KEY
              dbcrypt kv app.db list --prefix api. --key-env APP_KEY --store-key-env STORE_KEY
            """)

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case get, set, remove, list, rotate, passwd
    }

    @Argument(help: "The database.")
    var database: String

    @Argument(help: "get, set, remove, list, rotate or passwd.")
    var action: Action

    @Argument(help: ArgumentHelp("The entry's name (get, set, remove).", valueName: "name"))
    var name: String?

    @Option(help: ArgumentHelp("The store's name.", valueName: "NAME"))
    var store = "default"

    @Option(help: ArgumentHelp("list: only the names that start with this.", valueName: "TEXT"))
    var prefix = ""

    @Flag(help: "set: make the store when the database has none.")
    var create = false

    @Flag(help: "list: print the names as a JSON array.")
    var json = false

    @OptionGroup var databaseKey: KeyOptions
    @OptionGroup var storeKey: KeySource<StoreKeyRole>
    @OptionGroup var newStoreKey: NewStoreKeyOptions
    @OptionGroup(title: "Cipher settings of the database, if not a standard format") var cipher: CipherOptions

    func validate() throws {
        switch action {
        case .get, .set, .remove:
            if name == nil { throw ValidationError("kv \(action.rawValue) needs the entry's name.") }
        case .list, .rotate, .passwd:
            if name != nil { throw ValidationError("kv \(action.rawValue) takes no entry name.") }
        }
        if create && action != .set { throw ValidationError("--create goes with kv set.") }
        if json && action != .list { throw ValidationError("--json goes with kv list.") }
    }

    func run() throws {
        try reportingErrors {
            let format = try requireDatabaseFile(database)
            let dbKey = try databaseKey.keyIfNeeded(for: database, format: format)
            var options = cipher.databaseOptions()
            let writes = action != .get && action != .list
            options.readOnly = !writes
            let queue = try namingDamage(of: database) {
                do {
                    return try DatabaseQueue(path: database, key: dbKey, options: options)
                } catch DatabaseError.unfinishedTransaction where !writes {
                    // Rolled back first where this process may, as check and info do.
                    try openForReading(database, key: dbKey, options: options).close()
                    return try DatabaseQueue(path: database, key: dbKey, options: options)
                }
            }
            try closing(database, close: queue.close, closeWithoutCheckpoint: queue.closeWithoutCheckpoint) {
                // The value first: nothing is made or changed when it cannot be read.
                var value: Data?
                if action == .set {
                    if isatty(STDIN_FILENO) == 1 { printError("reading the value from standard input; end it with Ctrl-D.") }
                    value = try StandardStreams.readInput()
                }
                let exists = try SealedStore.exists(store, in: queue)
                guard exists || create else {
                    throw CLIError("\(database) has no sealed store named \"\(store)\": check --store, or make it with kv set --create.")
                }
                let (credential, madeKey) = try storeKey.credential(store: store, isNew: !exists)
                // A set is the store's initial write: a store it makes is
                // made in the same transaction as the entry, never left empty.
                let initialWrite = value.map { value in { (entries: SealedStore.Entries) in try entries.set(value, for: name!) } }
                try removingOnFailure(madeKey?.madeIn, inUse: { (try? SealedStore.exists(store, in: queue)) ?? true }) {
                    let sealed = try namingDamage(of: database) {
                        try SealedStore(queue, name: store, credential: credential, create: create, initialWrite: initialWrite)
                    }
                    try namingDamage(of: database) { try perform(on: sealed) }
                }
            }
        }
    }

    /// `name` on one line that no other name prints as: escaped as inside a
    /// JSON string (`\\`, `\"`, `\n`, `\u2028`), and the empty name as `""`.
    static func listed(_ name: String) -> String {
        name.isEmpty ? "\"\"" : JSONValue.escaped(name)
    }

    /// Runs the action (a set ran as the store opened).
    private func perform(on sealed: SealedStore) throws {
        switch action {
        case .get:
            guard let value = try sealed.get(name!) else {
                throw CLIError("Store \"\(store)\" has no entry \"\(name!)\".")
            }
            try StandardStreams.write(value)
            if isatty(STDOUT_FILENO) == 1 { try StandardStreams.write(Data("\n".utf8)) }
        case .set:
            break
        case .remove:
            guard try sealed.remove(name!) else { throw CLIError("Store \"\(store)\" has no entry \"\(name!)\".") }
        case .list:
            let names = try sealed.names(withPrefix: prefix)
            if json {
                try StandardStreams.print(JSONValue.array(names.map(JSONValue.string)).encoded)
            } else {
                for name in names { try StandardStreams.print(Self.listed(name)) }
            }
        case .rotate:
            let before = try sealed.entriesUnderOlderKeys()
            try sealed.rotateDataKey(progress: ProgressBar.callback(label: "Sealing again", pageSize: 0))
            let count = try sealed.names().count
            try StandardStreams.say("Rotated the data key of store \"\(store)\": \(count) entries sealed under the new key"
                + (before > 0 ? " (\(before) left by an earlier rotation among them)." : "."))
        case .passwd:
            try sealed.changeCredential(to: newStoreKey.credential(store: store))
            try StandardStreams.say("Changed the passphrase of store \"\(store)\".")
        }
    }
}
