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
            """)

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case create, delete, exists
    }

    @Argument(help: "create, delete or exists.")
    var action: Action

    @Option(help: ArgumentHelp("The key kept in the Secret Service under this service and account.", valueName: "SERVICE/ACCOUNT"))
    var keyring: String?

    @Option(name: .customLong("kernel-keyring"), help: ArgumentHelp("The key kept in the kernel keyring as dbcrypt:NAME.", valueName: "NAME"))
    var kernelKeyring: String?

    @Option(help: ArgumentHelp("exists only: the service credential NAME (credentials are read-only).", valueName: "NAME"))
    var credential: String?

    func validate() throws {
        let given = [keyring, kernelKeyring, credential].compactMap { $0 }.count
        if given != 1 { throw ValidationError("Name one key: --keyring SERVICE/ACCOUNT, --kernel-keyring NAME or --credential NAME.") }
        if credential != nil && action != .exists {
            throw ValidationError("--credential goes with key exists: credentials are written by the service manager (LoadCredential= in the unit)")
        }
        _ = try item
    }

    /// The key named.
    var item: KeyStoreItem? {
        get throws {
            try KeyStoreItem(keyring: keyring, kernelKeyring: kernelKeyring, credential: credential,
                             prefix: "")
        }
    }

    func run() throws {
        try reportingErrors {
            guard let item = try item else { return }
            switch action {
            case .create:
                _ = try DatabaseKey.create(in: item.store, service: item.service, account: item.account)
                try StandardStreams.say("Made a new random key in \(item.store.name) as \(item.name).")
                item.warnIfForgotten()
            case .delete:
                try DatabaseKey.delete(from: item.store, service: item.service, account: item.account)
                try StandardStreams.say("Removed the key \(item.name) from \(item.store.name): databases encrypted with it no longer open without a copy of it.")
            case .exists:
                _ = try item.load()
                try StandardStreams.say("\(item.store.name.capitalizedFirst) holds a key named \(item.name).")
            }
        }
    }
}
