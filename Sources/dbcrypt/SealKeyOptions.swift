import ArgumentParser
import DBCrypt
import DBCryptSeal
import Foundation

/// Where the passphrase of a sealed store comes from (`--store-key-env`,
/// `--store-key-file`, a key store, or the terminal), and the new one of `kv passwd`.
struct StoreKeyOptions: ParsableArguments {
    @Option(name: .customLong("store-key-env"), help: ArgumentHelp("Read the store's passphrase from this environment variable.", valueName: "NAME"))
    var keyEnvironment: String?

    @Option(name: .customLong("store-key-file"), help: ArgumentHelp("Read the store's passphrase from this file.", valueName: "PATH"))
    var keyFile: String?

    @Option(name: .customLong("store-key-keyring"), help: ArgumentHelp("Use the key kept in the Secret Service under this service and account (made there for a new store).", valueName: "SERVICE/ACCOUNT"))
    var keyring: String?

    @Option(name: .customLong("store-key-kernel-keyring"), help: ArgumentHelp("Use the key kept in the kernel keyring as dbcrypt:NAME (made there for a new store).", valueName: "NAME"))
    var kernelKeyring: String?

    @Option(name: .customLong("store-key-credential"), help: ArgumentHelp("Use the service credential NAME.", valueName: "NAME"))
    var credential: String?

    @Option(name: .customLong("new-store-key-env"), help: ArgumentHelp("kv passwd: read the new passphrase from this environment variable.", valueName: "NAME"))
    var newKeyEnvironment: String?

    @Option(name: .customLong("new-store-key-file"), help: ArgumentHelp("kv passwd: read the new passphrase from this file.", valueName: "PATH"))
    var newKeyFile: String?

    func validate() throws {
        _ = try KeyStoreItem.sourcesGiven([keyEnvironment, keyFile, keyring, kernelKeyring, credential], prefix: "store-key-")
        if newKeyEnvironment != nil && newKeyFile != nil { throw ValidationError("Give --new-store-key-env or --new-store-key-file, not both.") }
        _ = try storeItem
    }

    /// The key store item named, if any.
    var storeItem: KeyStoreItem? {
        get throws {
            try KeyStoreItem(keyring: keyring, kernelKeyring: kernelKeyring, credential: credential,
                             prefix: "store-key-")
        }
    }

    /// The store's credential (asked twice on a terminal when `isNew`); a
    /// new store whose key store holds no key gets a new random one there,
    /// removed again when the command fails (``removingOnFailure(_:inUse:_:)``).
    func credential(store: String, isNew: Bool) throws -> (credential: StoreCredential, key: NewKey?) {
        if let item = try storeItem {
            let key = isNew ? try item.loadOrCreate() : NewKey(key: try item.load(), madeIn: nil)
            return (try StoreCredential(key.key), key)
        }
        let credential = try Self.credential(
            environment: keyEnvironment, file: keyFile, prompt: "Passphrase of store \(store): ", confirm: isNew,
            options: ("--store-key-env", "--store-key-file"))
        return (credential, nil)
    }

    /// The new credential of `kv passwd`, asked twice on a terminal.
    func newCredential(store: String) throws -> StoreCredential {
        try Self.credential(
            environment: newKeyEnvironment, file: newKeyFile, prompt: "New passphrase of store \(store): ", confirm: true,
            options: ("--new-store-key-env", "--new-store-key-file"))
    }

    /// A passphrase (UTF-8 text, one trailing newline ignored), or a key
    /// written `x'<64 hex digits>'`.
    private static func credential(environment: String?, file: String?, prompt: String, confirm: Bool,
                                   options: (environment: String, file: String)) throws -> StoreCredential {
        var (bytes, source) = try KeyInput.readText(environment: environment, file: file, prompt: prompt, confirm: confirm, options: options)
        defer { bytes.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        KeyInput.trimNewline(&bytes)
        guard !bytes.isEmpty else { throw CLIError("The passphrase in \(source) is empty.") }
        if bytes.count == 67, bytes.first == UInt8(ascii: "x"), bytes[1] == UInt8(ascii: "'"), bytes.last == UInt8(ascii: "'") {
            guard let key = try? SealingKey(hex: String(decoding: bytes[2..<66], as: UTF8.self)) else {
                throw CLIError("The key in \(source) is malformed: write x' then 64 hex digits then '.")
            }
            return .key(key)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CLIError("The passphrase in \(source) is not UTF-8 text.")
        }
        return .passphrase(text)
    }
}

/// Where the envelope key comes from: a variable (the server's
/// `ENCRYPTION_KEY`) or a file, never an argument.
struct EnvelopeKeyOptions: ParsableArguments {
    @Option(name: .customLong("key-env"), help: ArgumentHelp("Read the key from this environment variable (a server's ENCRYPTION_KEY).", valueName: "NAME"))
    var keyEnvironment: String?

    @Option(name: .customLong("key-file"), help: ArgumentHelp("Read the key from this file.", valueName: "PATH"))
    var keyFile: String?

    @Option(name: .customLong("key-keyring"), help: ArgumentHelp("Use the key kept in the Secret Service under this service and account.", valueName: "SERVICE/ACCOUNT"))
    var keyring: String?

    @Option(name: .customLong("key-kernel-keyring"), help: ArgumentHelp("Use the key kept in the kernel keyring as dbcrypt:NAME.", valueName: "NAME"))
    var kernelKeyring: String?

    @Option(name: .customLong("key-credential"), help: ArgumentHelp("Use the service credential NAME.", valueName: "NAME"))
    var credential: String?

    @Flag(help: "The key is text whose first 32 characters, padded with \"0\", are the key (the compatibility form of some clients).")
    var paddedTextKey = false

    func validate() throws {
        let given = try KeyStoreItem.sourcesGiven([keyEnvironment, keyFile, keyring, kernelKeyring, credential], prefix: "key-")
        if given == 0 { throw ValidationError("Give the key with --key-env NAME, --key-file PATH or a key store (--key-keyring SERVICE/ACCOUNT, ...).") }
        _ = try storeItem
    }

    /// The key store item named, if any.
    var storeItem: KeyStoreItem? {
        get throws {
            try KeyStoreItem(keyring: keyring, kernelKeyring: kernelKeyring, credential: credential,
                             prefix: "key-")
        }
    }

    /// The key: a raw key kept in a key store, or text (from the store, the
    /// variable or the file) of 64 hex digits, Base64 of 32 bytes or 32
    /// bytes; with `--padded-text-key`, the padded form.
    func key() throws -> SealingKey {
        var (bytes, source): ([UInt8], String)
        if let item = try storeItem {
            let stored = try item.load()
            if stored.kind != .passphrase { return try SealingKey(stored) }
            (bytes, source) = (stored.withKeyText { Array($0) }, "\(item.store.name) (\(item.name))")
        } else {
            (bytes, source) = try KeyInput.readText(environment: keyEnvironment, file: keyFile, prompt: "", confirm: false,
                                                    options: ("--key-env", "--key-file"))
        }
        defer { bytes.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        KeyInput.trimNewline(&bytes)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw CLIError("The key in \(source) is not UTF-8 text.") }
        do {
            return paddedTextKey ? try SealingKey(paddedText: text) : try SealingKey(text: text)
        } catch let error as SealError {
            throw CLIError("The key in \(source) is not usable: \(error)")
        }
    }
}
