import ArgumentParser
import DBCrypt
import Foundation

/// Where the key of the database comes from. There is deliberately no option
/// that takes the key itself: arguments are visible to every user of the machine.
struct KeyOptions: ParsableArguments {
    @Option(name: .customLong("key-env"), help: ArgumentHelp("Read the key from this environment variable.", valueName: "NAME"))
    var keyEnvironment: String?

    @Option(name: .customLong("key-file"), help: ArgumentHelp("Read the key from this file.", valueName: "PATH"))
    var keyFile: String?

    @Option(name: .customLong("key-keyring"), help: ArgumentHelp("Use the key kept in the Secret Service (GNOME Keyring, KWallet) under this service and account.", valueName: "SERVICE/ACCOUNT"))
    var keyring: String?

    @Option(name: .customLong("key-kernel-keyring"), help: ArgumentHelp("Use the key kept in the kernel keyring as dbcrypt:NAME.", valueName: "NAME"))
    var kernelKeyring: String?

    @Option(name: .customLong("key-credential"), help: ArgumentHelp("Use the service credential NAME (systemd's LoadCredential=).", valueName: "NAME"))
    var credential: String?

    func validate() throws {
        _ = try KeyStoreItem.sourcesGiven([keyEnvironment, keyFile, keyring, kernelKeyring, credential], prefix: "key-")
        _ = try storeItem   // a malformed name is a usage error, before any file is looked at
    }

    /// Whether a key was given on the command line.
    var isGiven: Bool { [keyEnvironment, keyFile, keyring, kernelKeyring, credential].contains { $0 != nil } }

    /// The key store item named, if any.
    var storeItem: KeyStoreItem? {
        get throws {
            try KeyStoreItem(keyring: keyring, kernelKeyring: kernelKeyring, credential: credential,
                             prefix: "key-")
        }
    }

    /// The key: from the key store, the variable or the file, else asked on
    /// the terminal (twice when `confirm`). Throws "no key given" when
    /// there is no terminal.
    func key(prompt: String, confirm: Bool = false) throws -> DatabaseKey {
        if let item = try storeItem { return try item.load() }
        return try KeyInput.read(environment: keyEnvironment, file: keyFile, prompt: prompt, confirm: confirm,
                                 options: ("--key-env", "--key-file"))
    }

    /// The key of a database about to be encrypted: as ``key(prompt:confirm:)``
    /// (asked twice on a terminal), except that a key store holding no key
    /// yet gets a new random one, removed again when the command fails.
    func newDatabaseKey(prompt: String) throws -> NewKey {
        try NewKey.from(try storeItem) { try key(prompt: prompt, confirm: true) }
    }

    /// The key of the database at `path`, whose header says `format`: the
    /// one given, else asked for when the file is encrypted, else nil (a
    /// plaintext or missing file). An empty file without a key is refused.
    func keyIfNeeded(for path: String, format: FileFormat) throws -> DatabaseKey? {
        if isGiven { return try key(prompt: "Key for \(path): ") }
        switch format {
        case .notPlaintext: return try key(prompt: "Key for \(path): ")
        case .empty: throw emptyFileError(path)
        case .plaintext, .missing: return nil
        }
    }
}

/// Where the new key of `rekey` comes from.
struct NewKeyOptions: ParsableArguments {
    @Option(name: .customLong("new-key-env"), help: ArgumentHelp("Read the new key from this environment variable.", valueName: "NAME"))
    var keyEnvironment: String?

    @Option(name: .customLong("new-key-file"), help: ArgumentHelp("Read the new key from this file.", valueName: "PATH"))
    var keyFile: String?

    @Option(name: .customLong("new-key-keyring"), help: ArgumentHelp("Use the key kept in the Secret Service under this service and account, made there when there is none.", valueName: "SERVICE/ACCOUNT"))
    var keyring: String?

    @Option(name: .customLong("new-key-kernel-keyring"), help: ArgumentHelp("Use the key kept in the kernel keyring as dbcrypt:NAME, made there when there is none.", valueName: "NAME"))
    var kernelKeyring: String?

    @Option(name: .customLong("new-key-credential"), help: ArgumentHelp("Use the service credential NAME.", valueName: "NAME"))
    var credential: String?

    func validate() throws {
        _ = try KeyStoreItem.sourcesGiven([keyEnvironment, keyFile, keyring, kernelKeyring, credential], prefix: "new-key-")
        _ = try storeItem
    }

    /// Whether any source of a new key was given.
    var isGiven: Bool { [keyEnvironment, keyFile, keyring, kernelKeyring, credential].contains { $0 != nil } }

    /// The key store item named, if any.
    var storeItem: KeyStoreItem? {
        get throws {
            try KeyStoreItem(keyring: keyring, kernelKeyring: kernelKeyring, credential: credential,
                             prefix: "new-key-")
        }
    }

    /// The new key: from a key store (made there when it holds none, and
    /// removed again when the command fails), the variable or the file,
    /// else asked twice on the terminal.
    func key(prompt: String) throws -> NewKey {
        try NewKey.from(try storeItem) {
            try KeyInput.read(environment: keyEnvironment, file: keyFile, prompt: prompt, confirm: true,
                              options: ("--new-key-env", "--new-key-file"))
        }
    }
}

/// The cipher settings of a file to create, or of an existing file whose
/// settings are not one of the standard formats.
struct CipherOptions: ParsableArguments {
    @Option(help: ArgumentHelp("sqlcipher4 (the default for new files) or sqlcipher3.", valueName: "FORMAT"))
    var format: CipherSettings.Format?

    @Option(help: ArgumentHelp("Page size in bytes, if not the format's.", valueName: "BYTES"))
    var pageSize: Int?

    @Option(name: .customLong("kdf-iter"), help: ArgumentHelp("PBKDF2 iterations, if not the format's.", valueName: "N"))
    var kdfIterations: Int?

    /// Whether any setting was given.
    var isGiven: Bool { format != nil || pageSize != nil || kdfIterations != nil }

    /// The settings given, on top of SQLCipher 4's.
    var settings: CipherSettings {
        CipherSettings(format ?? .sqlcipher4, pageSize: pageSize, kdfIterations: kdfIterations)
    }

    /// Options that open a file with these settings (the other standard
    /// format is still tried when they do not fit), and `salt`, the salt
    /// of a file with a plaintext header, when given.
    func databaseOptions(salt: [UInt8]? = nil) -> Database.Options {
        var options = Database.Options()
        options.cipher = settings
        options.cipher.salt = salt
        options.create = false
        return options
    }
}

/// The cipher settings `rekey` writes, apart from those of the file as it is.
struct NewCipherOptions: ParsableArguments {
    @Option(name: .customLong("new-format"), help: ArgumentHelp("Write sqlcipher4 or sqlcipher3.", valueName: "FORMAT"))
    var format: CipherSettings.Format?

    @Option(name: .customLong("new-page-size"), help: ArgumentHelp("Write pages of this size in bytes.", valueName: "BYTES"))
    var pageSize: Int?

    @Option(name: .customLong("new-kdf-iter"), help: ArgumentHelp("Write with this many PBKDF2 iterations.", valueName: "N"))
    var kdfIterations: Int?

    /// Whether any setting was given.
    var isGiven: Bool { format != nil || pageSize != nil || kdfIterations != nil }

    /// The settings to write: what is given, on top of the new format's
    /// defaults when a format is given, else on top of `current`; nil when
    /// nothing is given (the current settings are kept).
    func settings(current: CipherSettings) -> CipherSettings? {
        guard isGiven else { return nil }
        if let format { return CipherSettings(format, pageSize: pageSize, kdfIterations: kdfIterations) }
        return CipherSettings(current.format, pageSize: pageSize ?? current.pageSize,
                              kdfIterations: kdfIterations ?? current.kdfIterations)
    }
}

extension CipherSettings.Format: ExpressibleByArgument {}
