import ArgumentParser
import DBCrypt
import SQLCipherFormat

/// `dbcrypt decrypt`: encrypted to plaintext.
struct Decrypt: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export an encrypted database to a plaintext one.",
        discussion: """
            The plaintext copy is written beside --output, checked, then renamed into place \
            with mode 0600. The encrypted database is not changed. A file the linked SQLCipher \
            cannot open (SQLCipher 1 or 2 settings, other hashes, a plaintext header: give \
            --salt) is decrypted by DBCrypt's own page reader instead, which says so; every \
            page must authenticate (see dbcrypt recover for a damaged file).

            Example:
              dbcrypt decrypt app.db -o app-plain.db --key-env APP_KEY
            """)

    @Argument(help: "The encrypted database.")
    var database: String

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("Where to write the plaintext database.", valueName: "PATH"))
    var output: String

    @Flag(help: "Replace --output if it exists.")
    var force = false

    @OptionGroup var key: KeyOptions
    @OptionGroup(title: "Cipher settings of the database, if not a standard format") var cipher: CipherOptions
    @OptionGroup(title: "Settings only DBCrypt's page reader reads") var pageFormat: PageFormatOptions

    func run() throws {
        try reportingErrors {
            if case .plaintext = try requireDatabaseFile(database), !pageFormat.isGiven {
                throw DatabaseError.notEncrypted(path: database)
            }
            let databaseKey = try key.key(prompt: "Key for \(database): ")
            var options = ExportOptions()
            options.replaceExisting = force
            options.pageReader = EncryptedDatabaseFile.self
            options.progress = ProgressBar.callback(label: "Decrypting", pageSize: 4096)
            var settings = pageFormat.settings(cipher) ?? cipher.settings
            settings.salt = pageFormat.saltValue
            if case let .pageReader(settings) = try DatabaseEncryption.decrypt(database, key: databaseKey, cipher: settings, to: output, options: options) {
                printError("note: the linked SQLCipher cannot open \(database) (\(settings)); DBCrypt's page reader decrypted it.")
            }
            try StandardStreams.say("Decrypted \(database) to \(output).")
        }
    }
}
