import ArgumentParser
import DBCrypt
import SQLCipherFormat

/// `dbcrypt recover`: salvage what authenticates of a damaged encrypted database.
struct Recover: ParsableCommand, DatabaseFileCommand {
    static let configuration = CommandConfiguration(
        abstract: "Salvage every page of a damaged encrypted database that authenticates, into a plaintext one.",
        discussion: """
            DBCrypt's page reader decrypts every page whose HMAC matches and sets aside the \
            others; the tables are then rebuilt from the pages that are left: each table with \
            its own CREATE statement and the rows its b-tree still reaches, rowids kept, then \
            its indexes, views and triggers. Rows on table pages whose parent page was lost \
            (or all rows, when the schema on page 1 was) go to lost_and_found, with the page \
            they were on. Rows on damaged pages are lost. The result is written beside \
            --output, checked, then renamed into place with mode 0600; the damaged database \
            is not changed.

            Example:
              dbcrypt recover app.db -o rescued.db --key-env APP_KEY
            """)

    @OptionGroup var file: DatabaseFileOptions

    @OptionGroup var plaintext: PlaintextOutputOptions

    func run() throws {
        try requireEncrypted()
        var options = ExportOptions()
        options.replaceExisting = plaintext.force
        options.progress = ProgressBar.callback(label: "Recovering", pageSize: settings.effectivePageSize)
        let report = try DatabaseEncryption.recover(database, key: key.key(prompt: "Key for \(database): "), cipher: settings, to: plaintext.output,
                                                    reader: EncryptedDatabaseFile.self, options: options)
        try StandardStreams.say("Recovered \(database) to \(plaintext.output):\n\(report)")
    }
}
