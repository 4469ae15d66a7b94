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
        try reportingErrors {
            try requireEncrypted()
            let file = try PageReaderFallback.open(EncryptedDatabaseFile.self, database, key: key.key(prompt: "Key for \(database): "), cipher: settings)
            var options = ExportOptions()
            options.replaceExisting = plaintext.force
            var report: SalvageReport?
            try DatabaseEncryption.replaceFile(at: plaintext.output, source: database, options: options, write: { newFile in
                let db = try Database(path: newFile)
                defer { db.close() }
                report = try file.salvage(into: SalvageConnection(db), scratch: newFile + "-pages")
            }, check: PageReaderFallback.checkPlaintext)
            guard let report else { return }
            var lines = ["Recovered \(database) to \(plaintext.output):"]
            lines += report.tables.map { "  \($0.name): \($0.rows) rows" }
            if report.orphans > 0 { lines.append("  lost_and_found: \(report.orphans) rows whose table could not be told") }
            lines += report.notes.map { "  note: \($0)" }
            let (zeroed, pageCount) = (report.pages.zeroedPages, report.pages.pageCount)
            if !zeroed.isEmpty {
                lines.append("\(zeroed.count) of \(pageCount) pages did not authenticate and were lost (\(SQLCipherFormatError.list(zeroed))).")
            } else if file.settings.usesHMAC {
                lines.append("Every one of the \(pageCount) pages authenticated.")
            } else {
                // Nothing vouches for pages without an HMAC: they are not called authentic.
                lines.append("Every one of the \(pageCount) pages decrypted; SQLCipher 1 pages carry no HMAC, so whether they were altered cannot be verified.")
            }
            try StandardStreams.say(lines.joined(separator: "\n"))
        }
    }
}
