import ArgumentParser
import DBCrypt
import Foundation

/// The database's key, and the new key of `rekey`.
typealias KeyOptions = KeySource<DatabaseKeyRole>
typealias NewKeyOptions = KeySource<NewKeyRole>

/// The cipher settings of a file to create, or of an existing file whose
/// settings are not one of the standard formats.
struct CipherOptions: ParsableArguments {
    @Option(help: ArgumentHelp("sqlcipher4 (the default for new files) or sqlcipher3.", valueName: "FORMAT"))
    var format: CipherSettings.Format?

    @Option(help: ArgumentHelp("Page size in bytes, if not the format's.", valueName: "BYTES"))
    var pageSize: Int?

    @Option(name: .customLong("kdf-iter"), help: ArgumentHelp("PBKDF2 iterations, if not the format's.", valueName: "N"))
    var kdfIterations: Int?

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
