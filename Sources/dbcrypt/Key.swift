import ArgumentParser
import DBCrypt
import DBCryptKeyStore

/// `dbcrypt key`: make, remove or look for a random key in a key store.
struct Key: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make, remove or look for a random key in the system's key store.",
        discussion: """
            create makes a random raw key (32 bytes and a 16-byte salt) and keeps it in the \
            store: the Secret Service (--keyring SERVICE/ACCOUNT: GNOME Keyring, KWallet) or \
            the kernel keyring (--kernel-keyring NAME, kept as dbcrypt:NAME until the machine \
            restarts). Databases opened with it skip the key derivation. No command ever \
            prints a key. exists exits 0 when the key is there, 6 when it is not.

            Example:
              dbcrypt key create --keyring dbcrypt/app
              dbcrypt migrate app.db --key-keyring dbcrypt/app
              dbcrypt key exists --kernel-keyring app
            """,
        subcommands: [Create.self, Delete.self, Exists.self])

    /// `key create`: a new random key in the store.
    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a random raw key (32 bytes and a 16-byte salt) in the key store.")
        @OptionGroup var item: KeyItemOptions

        func validate() throws { try item.requireWritable() }

        func run() throws {
            let item = try item.item
            try item.create()
            try StandardStreams.say("Made a new random key in \(item.store.name) as \(item.name).")
            item.forgottenAtRestartNote.map(printError)
        }
    }

    /// `key delete`: the key removed from the store.
    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove the key from the key store.")
        @OptionGroup var item: KeyItemOptions

        func validate() throws { try item.requireWritable() }

        func run() throws {
            let item = try item.item
            try item.delete()
            try StandardStreams.say("Removed the key \(item.name) from \(item.store.name): databases encrypted with it no longer open without a copy of it.")
        }
    }

    /// `key exists`: status 0 when the key is there, 6 when it is not.
    struct Exists: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Exit 0 when the key store holds the key, 6 when it does not.")
        @OptionGroup var item: KeyItemOptions

        func run() throws {
            let item = try item.item
            _ = try item.load()
            try StandardStreams.say("\(item.store.name.capitalizedFirst) holds a key named \(item.name).")
        }
    }
}

/// The one key a `key` command names.
struct KeyItemOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The key kept in the Secret Service under this service and account.", valueName: "SERVICE/ACCOUNT"))
    var keyring: String?

    @Option(name: .customLong("kernel-keyring"), help: ArgumentHelp("The key kept in the kernel keyring as dbcrypt:NAME.", valueName: "NAME"))
    var kernelKeyring: String?

    @Option(help: ArgumentHelp("key exists only: the service credential NAME (credentials are read-only).", valueName: "NAME"))
    var credential: String?

    func validate() throws {
        if [keyring, kernelKeyring, credential].compactMap({ $0 }).count != 1 {
            throw ValidationError("Name one key: --keyring SERVICE/ACCOUNT, --kernel-keyring NAME or --credential NAME.")
        }
        _ = try item
    }

    /// Refuses a credential for `command`: credentials are the service manager's to write.
    func requireWritable() throws {
        guard credential == nil else {
            throw ValidationError("--credential goes with key exists: credentials are written by the service manager (LoadCredential= in the unit)")
        }
    }

    /// The key named (``validate()`` made sure there is one).
    var item: KeyStoreItem {
        get throws { try KeyStoreItem(keyring: keyring, kernelKeyring: kernelKeyring, credential: credential, prefix: "")! }
    }
}
