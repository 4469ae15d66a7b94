import ArgumentParser
import DBCrypt
import DBCryptCore

/// The database a command reads with the linked SQLCipher or, for settings
/// it cannot open, DBCrypt's page reader: its path, key and settings.
struct DatabaseFileOptions: ParsableArguments {
    @Argument(help: "The database.")
    var database: String

    @OptionGroup var key: KeyOptions
    @OptionGroup(title: "Cipher settings of the database, if not a standard format") var cipher: CipherOptions
    @OptionGroup(title: "Settings only DBCrypt's page reader reads") var pageFormat: PageFormatOptions
}

/// A command that reads one database given by ``DatabaseFileOptions``.
protocol DatabaseFileCommand {
    var file: DatabaseFileOptions { get }
}

extension DatabaseFileCommand {
    var database: String { file.database }
    var key: KeyOptions { file.key }
    var cipher: CipherOptions { file.cipher }
    var pageFormat: PageFormatOptions { file.pageFormat }
    /// The settings given, the salt among them.
    var settings: CipherSettings { pageFormat.settings(cipher) }

    /// Refuses a plaintext file, unless settings only the page reader reads
    /// are given (a file with a plaintext header looks plaintext).
    func requireEncrypted() throws {
        if case .plaintext = try requireDatabaseFile(database), !pageFormat.isGiven { throw DatabaseError.notEncrypted(path: database) }
    }
}

/// Where a command writes a plaintext copy, and whether it may replace what is there.
struct PlaintextOutputOptions: ParsableArguments {
    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("Where to write the plaintext database.", valueName: "PATH"))
    var output: String

    @Flag(help: "Replace --output if it exists.")
    var force = false
}

/// Settings only DBCrypt's page reader (SQLCipherFormat) reads: files the
/// linked SQLCipher cannot open.
struct PageFormatOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The salt of a file with a plaintext header (its first bytes in the clear), as 32 hex digits.",
                               valueName: "HEX"))
    var salt: String?

    @Option(name: .customLong("kdf-algorithm"), help: ArgumentHelp("The PBKDF2 hash, if not the format's: sha1, sha256 or sha512.", valueName: "HASH"))
    var kdfHash: CipherHash?

    @Option(name: .customLong("hmac-algorithm"), help: ArgumentHelp("The page HMAC, if not the format's: sha1, sha256, sha512 or none.", valueName: "HASH"))
    var hmacHash: String?

    func validate() throws {
        if let salt, saltBytes(salt) == nil { throw ValidationError("--salt takes 32 hex digits (16 bytes).") }
        if let hmacHash, hmacHash != "none", CipherHash(argument: hmacHash) == nil {
            throw ValidationError("--hmac-algorithm takes sha1, sha256, sha512 or none.")
        }
    }

    /// Whether anything here was given.
    var isGiven: Bool { salt != nil || kdfHash != nil || hmacHash != nil }

    /// `cipher`'s settings, with the salt and hashes given here.
    func settings(_ cipher: CipherOptions) -> CipherSettings {
        var settings = cipher.settings
        settings.salt = salt.flatMap(saltBytes)
        settings.kdfHash = kdfHash
        if let hmacHash {
            settings.hmacHash = CipherHash(argument: hmacHash)
            settings.usesHMAC = hmacHash != "none"
        }
        return settings
    }
}

extension CipherHash: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(rawValue: argument.uppercased())
    }
}

/// The 16 bytes of a salt given as 32 hex digits (or `x'...'`), or nil.
func saltBytes(_ text: String) -> [UInt8]? {
    var hex = Substring(text)
    if hex.hasPrefix("x'") && hex.hasSuffix("'") { hex = hex.dropFirst(2).dropLast() }
    guard hex.utf8.count == 32 else { return nil }
    return Hex.decode(Array(hex.utf8))
}
