import ArgumentParser
import DBCrypt
import DBCryptKeyStore
import DBCryptSeal
import Foundation

/// Which key a group of key options gives, and so the names of its five
/// options, `--<prefix>env`, `-file`, `-keyring`, `-kernel-keyring` and
/// `-credential`.
protocol KeyRole {
    /// `key-`, `new-key-`, `store-key-`.
    static var prefix: String { get }
    /// What the options read, for their help: "the key".
    static var what: String { get }
    /// Said of a key store's key in help, when a missing one is made there.
    static var made: String { get }
}

/// The key of the database a command works on.
enum DatabaseKeyRole: KeyRole {
    static let prefix = "key-", what = "the key", made = ""
}

/// The new key of `rekey` and of a backup under another key.
enum NewKeyRole: KeyRole {
    static let prefix = "new-key-", what = "the new key", made = ", made there when there is none"
}

/// The passphrase or key of a sealed store.
enum StoreKeyRole: KeyRole {
    static let prefix = "store-key-", what = "the store's passphrase", made = " (made there for a new store)"
}

/// The new passphrase or key of `kv passwd`.
enum NewStoreKeyRole: KeyRole {
    static let prefix = "new-store-key-", what = "the new passphrase", made = ", made there when there is none"
}

/// Where a key comes from: an environment variable, a file, a key store, or
/// else the terminal. There is deliberately no option that takes the key
/// itself: arguments are visible to every user of the machine.
struct KeySource<Role: KeyRole>: ParsableArguments {
    @Option(name: .customLong(Role.prefix + "env"), help: ArgumentHelp("Read \(Role.what) from this environment variable.", valueName: "NAME"))
    var environment: String?

    @Option(name: .customLong(Role.prefix + "file"), help: ArgumentHelp("Read \(Role.what) from this file.", valueName: "PATH"))
    var file: String?

    @Option(name: .customLong(Role.prefix + "keyring"),
            help: ArgumentHelp("Use the key kept in the Secret Service (GNOME Keyring, KWallet) under this service and account\(Role.made).",
                               valueName: "SERVICE/ACCOUNT"))
    var keyring: String?

    @Option(name: .customLong(Role.prefix + "kernel-keyring"),
            help: ArgumentHelp("Use the key kept in the kernel keyring as dbcrypt:NAME\(Role.made).", valueName: "NAME"))
    var kernelKeyring: String?

    @Option(name: .customLong(Role.prefix + "credential"),
            help: ArgumentHelp("Use the service credential NAME (systemd's LoadCredential=).", valueName: "NAME"))
    var credential: String?

    func validate() throws {
        let p = "--" + Role.prefix
        if [environment, file, keyring, kernelKeyring, credential].compactMap({ $0 }).count > 1 {
            throw ValidationError("Give one of \(p)env, \(p)file, \(p)keyring, \(p)kernel-keyring and \(p)credential.")
        }
        _ = try storeItem   // a malformed name is a usage error, before any file is looked at
    }

    /// Whether any source was given on the command line.
    var isGiven: Bool { [environment, file, keyring, kernelKeyring, credential].contains { $0 != nil } }

    /// The key store item named, if any.
    var storeItem: KeyStoreItem? {
        get throws { try KeyStoreItem(keyring: keyring, kernelKeyring: kernelKeyring, credential: credential, prefix: Role.prefix) }
    }

    /// Where the key comes from: the key store, the variable or the file,
    /// else the terminal (asking twice when `confirm`).
    func input(prompt: String, confirm: Bool) throws -> KeyInput {
        if let item = try storeItem { return .item(item) }
        return .given(environment: environment, file: file, prompt: prompt, confirm: confirm)
    }

    /// The key: from the key store, the variable or the file, else asked on
    /// the terminal (twice when `confirm`). Throws "no key given" when
    /// there is no terminal.
    func key(prompt: String, confirm: Bool = false) throws -> DatabaseKey {
        try namingOptions(Role.prefix) { try input(prompt: prompt, confirm: confirm).key() }
    }

    /// The key of data about to be encrypted: as ``key(prompt:confirm:)``
    /// (asked twice on a terminal), except that a key store holding no key
    /// yet gets a new random one, removed again when the command fails.
    func newKey(prompt: String) throws -> NewKey {
        if let item = try storeItem { return try NewKey(madeIfMissingIn: item, note: printError) }
        return NewKey(try key(prompt: prompt, confirm: true))
    }
}

extension KeySource where Role == DatabaseKeyRole {
    /// The key of the database at `path`, whose header says `format`: the
    /// one given, else asked for when the file is encrypted, else nil (a
    /// plaintext or missing file). An empty file without a key is refused,
    /// unless the command `creates` a database there (SQLite reads an empty
    /// file as an empty database).
    func keyIfNeeded(for path: String, format: FileFormat, creates: Bool = false) throws -> DatabaseKey? {
        if isGiven { return try key(prompt: "Key for \(path): ") }
        switch format {
        case .notPlaintext: return try key(prompt: "Key for \(path): ")
        case .empty where !creates: throw emptyFileError(path)
        case .plaintext, .missing, .empty: return nil
        }
    }

    /// A sealing key: a raw key kept in a key store, or text (from the store,
    /// the variable or the file) of 64 hex digits, Base64 of 32 bytes or 32
    /// bytes; with `paddedText`, the padded form.
    func sealingKey(paddedText: Bool) throws -> SealingKey {
        let input = try input(prompt: "", confirm: false)
        guard case let .item(item) = input else {
            return try namingOptions(Role.prefix) { try input.withText { try SealingKey(keyText: $0, source: input.description, paddedText: paddedText) } }
        }
        let stored = try item.load()
        if stored.kind != .passphrase { return try SealingKey(stored) }
        return try stored.withKeyText { try SealingKey(keyText: $0, source: input.description, paddedText: paddedText) }
    }
}

extension KeySource {
    /// Runs `body` with a sealed store's passphrase or key, asked for with
    /// `prompt` on a terminal (twice when `isNew`). When `isNew`, a key
    /// store holding no key yet gets a new random one, removed again if
    /// `body` fails, unless `inUse` says the store is sealed under it after all.
    ///
    /// - returns: the key store item a new key was made in, if one was.
    @discardableResult
    func withStoreCredential(prompt: String, isNew: Bool, inUse: (StoreCredential) -> Bool,
                             _ body: (StoreCredential) throws -> Void) throws -> KeyStoreItem? {
        guard let item = try storeItem else {
            let input = try input(prompt: prompt, confirm: isNew)
            try body(try namingOptions(Role.prefix) { try input.withText { try StoreCredential(keyText: $0, source: input.description) } })
            return nil
        }
        let key = isNew ? try NewKey(madeIfMissingIn: item, note: printError) : NewKey(try item.load())
        try key.using(inUse: { (try? inUse(StoreCredential($0))) ?? true }, note: printError) { try body(StoreCredential($0)) }
        return key.madeIn
    }
}

extension KeyInput {
    /// The variable, else the file, else the terminal, whose prompt shows
    /// what it quotes escaped (``displayed(_:limit:)``).
    static func given(environment: String?, file: String?, prompt: String, confirm: Bool) -> KeyInput {
        environment.map { .environment($0) } ?? file.map { .file($0) } ?? .terminal(prompt: displayed(prompt), confirm: confirm)
    }
}

/// Runs `body`, with the library's sentences that leave the choice of a
/// source open worded with the options `--<prefix>env` and `--<prefix>file`.
func namingOptions<R>(_ prefix: String, _ body: () throws -> R) throws -> R {
    do {
        return try body()
    } catch KeyInputError.notSet(let variable) {
        throw CLIError("The environment variable \(variable) is not set: put the key in it, or use --\(prefix)file.")
    } catch KeyInputError.noTerminal {
        throw CLIError("No key given: use --\(prefix)env or --\(prefix)file (there is no terminal to ask on).")
    }
}
