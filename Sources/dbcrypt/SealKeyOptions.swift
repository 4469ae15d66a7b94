import ArgumentParser
import DBCrypt
import DBCryptSeal
import Foundation

/// Where the passphrase of a sealed store comes from (`--store-key-env`,
/// `--store-key-file`, or the terminal), and the new one of `kv passwd`.
struct StoreKeyOptions: ParsableArguments {
    @Option(name: .customLong("store-key-env"), help: ArgumentHelp("Read the store's passphrase from this environment variable.", valueName: "NAME"))
    var keyEnvironment: String?

    @Option(name: .customLong("store-key-file"), help: ArgumentHelp("Read the store's passphrase from this file.", valueName: "PATH"))
    var keyFile: String?

    @Option(name: .customLong("new-store-key-env"), help: ArgumentHelp("kv passwd: read the new passphrase from this environment variable.", valueName: "NAME"))
    var newKeyEnvironment: String?

    @Option(name: .customLong("new-store-key-file"), help: ArgumentHelp("kv passwd: read the new passphrase from this file.", valueName: "PATH"))
    var newKeyFile: String?

    func validate() throws {
        if keyEnvironment != nil && keyFile != nil { throw ValidationError("Give --store-key-env or --store-key-file, not both.") }
        if newKeyEnvironment != nil && newKeyFile != nil { throw ValidationError("Give --new-store-key-env or --new-store-key-file, not both.") }
    }

    /// The store's credential (asked twice on a terminal when `confirm`: a new store).
    func credential(store: String, confirm: Bool) throws -> StoreCredential {
        try Self.credential(
            environment: keyEnvironment, file: keyFile, prompt: "Passphrase of store \(store): ", confirm: confirm,
            options: ("--store-key-env", "--store-key-file"))
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
        bytes = KeyInput.trimmingNewline(bytes)
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

    @Flag(help: "The key is text whose first 32 characters, padded with \"0\", are the key (the compatibility form of some clients).")
    var paddedTextKey = false

    func validate() throws {
        if keyEnvironment != nil && keyFile != nil { throw ValidationError("Give --key-env or --key-file, not both.") }
        if keyEnvironment == nil && keyFile == nil { throw ValidationError("Give the key with --key-env NAME or --key-file PATH.") }
    }

    /// The key: 64 hex digits, Base64 of 32 bytes or 32 bytes of text; with
    /// `--padded-text-key`, the padded form.
    func key() throws -> SealingKey {
        var (bytes, source) = try KeyInput.readText(environment: keyEnvironment, file: keyFile, prompt: "", confirm: false,
                                                    options: ("--key-env", "--key-file"))
        defer { bytes.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        bytes = KeyInput.trimmingNewline(bytes)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw CLIError("The key in \(source) is not UTF-8 text.") }
        do {
            return paddedTextKey ? try SealingKey(paddedText: text) : try SealingKey(text: text)
        } catch let error as SealError {
            throw CLIError("The key in \(source) is not usable: \(error)")
        }
    }
}
