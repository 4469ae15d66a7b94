import ArgumentParser
import DBCrypt
import DBCryptKeyStore
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
            arguments. (dbcrypt kv DB get NAME, the database first, works too.)

            Example:
              printf %s "$TOKEN" | dbcrypt kv set app.db api.token --create --key-env APP_KEY --store-key-env STORE_KEY
              dbcrypt kv get app.db api.token --key-env APP_KEY --store-key-env STORE_KEY
              dbcrypt kv list app.db --prefix api. --key-env APP_KEY --store-key-env STORE_KEY
            """,
        subcommands: [Get.self, Set.self, Remove.self, List.self, Rotate.self, Passwd.self])

    /// `kv get`: an entry's value to standard output.
    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write an entry's value to standard output.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The entry's name.") var name: String

        func run() throws {
            try store.open(writes: false) { sealed in
                guard let value = try sealed.get(name) else { throw CLIError("Store \"\(store.name)\" has no entry \"\(name)\".") }
                try StandardStreams.write(value)
                if isatty(STDOUT_FILENO) == 1 { try StandardStreams.write(Data("\n".utf8)) }
            }
        }
    }

    /// `kv set`: an entry's value from standard input.
    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Seal standard input as an entry's value.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The entry's name.") var name: String
        @Flag(help: "Make the store when the database has none (Argon2id, a new random salt).") var create = false

        func run() throws {
            try store.open(writes: true, create: create, setting: name) { _ in }
        }
    }

    /// `kv remove`: an entry.
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an entry.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The entry's name.") var name: String

        func run() throws {
            try store.open(writes: true) { sealed in
                guard try sealed.remove(name) else { throw CLIError("Store \"\(store.name)\" has no entry \"\(name)\".") }
            }
        }
    }

    /// `kv list`: the entries' names, one per line.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the entries' names, one per line, escaped as in JSON.")
        @OptionGroup var store: StoreOptions
        @Option(help: ArgumentHelp("Only the names that start with this.", valueName: "TEXT")) var prefix = ""
        @Flag(help: "Print the names as a JSON array.") var json = false

        func run() throws {
            try store.open(writes: false) { sealed in
                let names = try sealed.names(withPrefix: prefix)
                if json { return try StandardStreams.print(JSONValue.array(names.map(JSONValue.string)).encoded) }
                // One line that no other name prints as; the empty name as "".
                for name in names { try StandardStreams.print(name.isEmpty ? "\"\"" : JSONValue.escaped(name)) }
            }
        }
    }

    /// `kv rotate`: every entry sealed again under a new data key.
    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Seal every entry again under a new data key (a rotation that is stopped is finished by the next one).")
        @OptionGroup var store: StoreOptions

        func run() throws {
            try store.open(writes: true) { sealed in
                let before = try sealed.entriesUnderOlderKeys()
                try sealed.rotateDataKey(progress: ProgressBar.callback(label: "Sealing again", pageSize: 0))
                let count = try sealed.names().count
                try StandardStreams.say("Rotated the data key of store \"\(store.name)\": \(count) entries sealed under the new key"
                    + (before > 0 ? " (\(before) left by an earlier rotation among them)." : "."))
            }
        }
    }

    /// `kv passwd`: a new passphrase, whatever the store's size.
    struct Passwd: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change the store's passphrase (at once, whatever the store's size).")
        @OptionGroup var store: StoreOptions
        @OptionGroup var newStoreKey: KeySource<NewStoreKeyRole>

        func run() throws {
            try store.open(writes: true) { sealed in
                let made = try newStoreKey.withStoreCredential(prompt: "New passphrase of store \(store.name): ", isNew: true,
                                                                inUse: { (try? sealed.opens(with: $0)) ?? true }) { try sealed.changeCredential(to: $0) }
                let keptIn = made.map { ", a new key kept in \($0.store.name) as \($0.name)" } ?? ""
                try StandardStreams.say("Changed the passphrase of store \"\(store.name)\"\(keptIn).")
            }
        }
    }
}

/// What every `kv` command takes: the database, the store's name, and their keys.
struct StoreOptions: ParsableArguments {
    @Argument(help: "The database.")
    var database: String

    @Option(name: .customLong("store"), help: ArgumentHelp("The store's name.", valueName: "NAME"))
    var name = "default"

    @OptionGroup var databaseKey: KeyOptions
    @OptionGroup var storeKey: KeySource<StoreKeyRole>
    @OptionGroup(title: "Cipher settings of the database, if not a standard format") var cipher: CipherOptions

    /// Opens the database (for writing when `writes`) and the store, and
    /// runs `body` with it. `setting` names an entry whose value standard
    /// input holds: read first (nothing is made or changed when it cannot
    /// be read), and set as the store's initial write, so that a store it
    /// makes (with `create`) is never left made but empty.
    func open(writes: Bool, create: Bool = false, setting entry: String? = nil, _ body: (SealedStore) throws -> Void) throws {
        let format = try requireDatabaseFile(database)
        let dbKey = try databaseKey.keyIfNeeded(for: database, format: format)
        var options = cipher.databaseOptions()
        options.readOnly = !writes
        let initialEntry = entry.map { entry in
            (name: entry, value: {
                if isatty(STDIN_FILENO) == 1 { printError("reading the value from standard input; end it with Ctrl-D.") }
                return try StandardStreams.readInput()
            })
        }
        do {
            try namingDamage(of: database) {
                try SealedStore.withStore(named: name, inDatabaseAt: database, key: dbKey, options: options, create: create,
                                          initialEntry: initialEntry, rolledBack: { noteRolledBack(database) },
                                          credential: { isNew, storeExists, use in
                    try storeKey.withStoreCredential(prompt: "Passphrase of store \(name): ", isNew: isNew, inUse: { _ in storeExists() }, use)
                }, body)
            }
        } catch SealError.noSuchStore(name) where !create {
            throw CLIError("\(database) has no sealed store named \"\(name)\": check --store, or make it with kv set --create.")
        }
    }
}
