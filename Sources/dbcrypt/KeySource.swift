import ArgumentParser
import DBCrypt
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

    /// The key: from the key store, the variable or the file, else asked on
    /// the terminal (twice when `confirm`). Throws "no key given" when
    /// there is no terminal.
    func key(prompt: String, confirm: Bool = false) throws -> DatabaseKey {
        if let item = try storeItem { return try item.load() }
        var (bytes, source) = try text(prompt: prompt, confirm: confirm)
        defer { SecretBytes.wipe(&bytes) }
        return try KeyInput.parse(bytes, source: source)
    }

    /// The key of data about to be encrypted: as ``key(prompt:confirm:)``
    /// (asked twice on a terminal), except that a key store holding no key
    /// yet gets a new random one, removed again when the command fails.
    func newKey(prompt: String) throws -> NewKey {
        try NewKey.from(try storeItem) { try key(prompt: prompt, confirm: true) }
    }

    /// The bytes of the key or passphrase from the variable or the file, else
    /// asked on the terminal, and where they came from (for errors); not yet
    /// trimmed of a trailing newline. The caller wipes them.
    func text(prompt: String, confirm: Bool) throws -> (bytes: [UInt8], source: String) {
        try KeyInput.readText(environment: environment, file: file, prompt: prompt, confirm: confirm,
                              options: ("--\(Role.prefix)env", "--\(Role.prefix)file"))
    }
}

extension KeySource where Role == DatabaseKeyRole {
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

    /// A sealing key: a raw key kept in a key store, or text (from the store,
    /// the variable or the file) of 64 hex digits, Base64 of 32 bytes or 32
    /// bytes; with `paddedText`, the padded form.
    func sealingKey(paddedText: Bool) throws -> SealingKey {
        var (bytes, source): ([UInt8], String)
        if let item = try storeItem {
            let stored = try item.load()
            if stored.kind != .passphrase { return try SealingKey(stored) }
            (bytes, source) = (stored.withKeyText { Array($0) }, "\(item.store.name) (\(item.name))")
        } else {
            (bytes, source) = try text(prompt: "", confirm: false)
        }
        defer { SecretBytes.wipe(&bytes) }
        KeyInput.trimNewline(&bytes)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw CLIError("The key in \(source) is not UTF-8 text.") }
        do {
            return paddedText ? try SealingKey(paddedText: text) : try SealingKey(text: text)
        } catch let error as SealError {
            throw CLIError("The key in \(source) is not usable: \(error)")
        }
    }
}

extension KeySource where Role == StoreKeyRole {
    /// The store's credential (asked twice on a terminal when `isNew`); a
    /// new store whose key store holds no key gets a new random one there,
    /// removed again when the command fails (``removingOnFailure(_:inUse:_:)``).
    func credential(store: String, isNew: Bool) throws -> (credential: StoreCredential, key: NewKey?) {
        if let item = try storeItem {
            let key = isNew ? try item.loadOrCreate() : NewKey(key: try item.load(), madeIn: nil)
            return (try StoreCredential(key.key), key)
        }
        return (try StoreCredential.read(text(prompt: "Passphrase of store \(store): ", confirm: isNew)), nil)
    }
}

/// Where the new passphrase of `kv passwd` comes from.
struct NewStoreKeyOptions: ParsableArguments {
    @Option(name: .customLong("new-store-key-env"), help: ArgumentHelp("Read the new passphrase from this environment variable.", valueName: "NAME"))
    var environment: String?

    @Option(name: .customLong("new-store-key-file"), help: ArgumentHelp("Read the new passphrase from this file.", valueName: "PATH"))
    var file: String?

    func validate() throws {
        if environment != nil && file != nil { throw ValidationError("Give --new-store-key-env or --new-store-key-file, not both.") }
    }

    /// The new credential, asked twice on a terminal.
    func credential(store: String) throws -> StoreCredential {
        try StoreCredential.read(KeyInput.readText(environment: environment, file: file, prompt: "New passphrase of store \(store): ",
                                                   confirm: true, options: ("--new-store-key-env", "--new-store-key-file")))
    }
}

extension StoreCredential {
    /// A passphrase (UTF-8 text, one trailing newline ignored), or a key
    /// written `x'<64 hex digits>'`, from `text`, which it wipes.
    static func read(_ text: (bytes: [UInt8], source: String)) throws -> StoreCredential {
        var (bytes, source) = text
        defer { SecretBytes.wipe(&bytes) }
        KeyInput.trimNewline(&bytes)
        guard !bytes.isEmpty else { throw CLIError("The passphrase in \(source) is empty.") }
        if bytes.count == 67, bytes.first == UInt8(ascii: "x"), bytes[1] == UInt8(ascii: "'"), bytes.last == UInt8(ascii: "'") {
            guard let key = try? SealingKey(hex: String(decoding: bytes[2..<66], as: UTF8.self)) else {
                throw CLIError("The key in \(source) is malformed: write x' then 64 hex digits then '.")
            }
            return .key(key)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw CLIError("The passphrase in \(source) is not UTF-8 text.") }
        return .passphrase(text)
    }
}
