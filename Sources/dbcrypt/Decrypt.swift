import ArgumentParser
import DBCrypt
import SQLCipherFormat

/// `dbcrypt decrypt`: encrypted to plaintext.
struct Decrypt: ParsableCommand, DatabaseFileCommand {
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

    @OptionGroup var file: DatabaseFileOptions

    @OptionGroup var plaintext: PlaintextOutputOptions
    var output: String { plaintext.output }

    func run() throws {
        try requireEncrypted()
        let databaseKey = try key.key(prompt: "Key for \(database): ")
        var options = ExportOptions()
        options.replaceExisting = plaintext.force
        options.pageReader = EncryptedDatabaseFile.self
        options.progress = ProgressBar.callback(label: "Decrypting", pageSize: 4096)
        if case let .pageReader(settings) = try DatabaseEncryption.decrypt(database, key: databaseKey, cipher: settings, to: output, options: options) {
            printError("note: the linked SQLCipher cannot open \(database) (\(settings)); DBCrypt's page reader decrypted it.")
        }
        try StandardStreams.say("Decrypted \(database) to \(output).")
    }
}
