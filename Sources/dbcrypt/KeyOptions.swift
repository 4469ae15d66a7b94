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

    func validate() throws {
        if keyEnvironment != nil && keyFile != nil { throw ValidationError("Give --key-env or --key-file, not both.") }
    }

    /// Whether a key was given on the command line.
    var isGiven: Bool { keyEnvironment != nil || keyFile != nil }

    /// The key: from the variable or file, else asked on the terminal
    /// (twice when `confirm`). Throws "no key given" when there is no terminal.
    func key(prompt: String, confirm: Bool = false) throws -> DatabaseKey {
        try KeyInput.read(environment: keyEnvironment, file: keyFile, prompt: prompt, confirm: confirm,
                          options: ("--key-env", "--key-file"))
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

    func validate() throws {
        if keyEnvironment != nil && keyFile != nil { throw ValidationError("Give --new-key-env or --new-key-file, not both.") }
    }

    /// The new key, from the variable or file, else asked twice on the terminal.
    func key(prompt: String) throws -> DatabaseKey {
        try KeyInput.read(environment: keyEnvironment, file: keyFile, prompt: prompt, confirm: true,
                          options: ("--new-key-env", "--new-key-file"))
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

    /// The settings to write: what is given, on top of the new format's
    /// defaults when a format is given, else on top of `current`; nil when
    /// nothing is given (the current settings are kept).
    func settings(current: CipherSettings) -> CipherSettings? {
        guard format != nil || pageSize != nil || kdfIterations != nil else { return nil }
        if let format { return CipherSettings(format, pageSize: pageSize, kdfIterations: kdfIterations) }
        return CipherSettings(current.format, pageSize: pageSize ?? current.pageSize,
                              kdfIterations: kdfIterations ?? current.kdfIterations)
    }
}

extension CipherSettings.Format: ExpressibleByArgument {}
