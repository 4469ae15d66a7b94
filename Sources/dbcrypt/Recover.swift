import ArgumentParser
import DBCrypt
import Foundation
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
            let file = try openWithPageReader()
            var options = ExportOptions()
            options.replaceExisting = plaintext.force
            var report: SalvageReport?
            try DatabaseEncryption.replaceFile(at: plaintext.output, source: database, options: options, write: { newFile in
                let db = try Database(path: newFile)
                defer { db.close() }
                report = try file.salvage(into: db, scratch: newFile + "-pages")
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

/// DBCrypt's connection as where a salvage writes.
extension Database: SalvageDestination {
    public func execute(_ sql: String, _ arguments: [SalvagedValue]) throws {
        try execute(sql, StatementArguments(arguments.map { value -> DatabaseValue in
            switch value {
            case .null: .null
            case let .integer(v): .integer(v)
            case let .real(v): .real(v)
            case let .text(v): .text(v)
            case let .blob(v): .blob(Data(v))
            }
        }))
    }

    public func rows(_ sql: String) throws -> [[SalvagedValue]] {
        try fetchAll(sql).map { row in
            (0..<row.count).map { index -> SalvagedValue in
                switch row[index] as DatabaseValue {
                case .null: .null
                case let .integer(v): .integer(v)
                case let .real(v): .real(v)
                case let .text(v): .text(v)
                case let .blob(v): .blob([UInt8](v))
                }
            }
        }
    }
}
