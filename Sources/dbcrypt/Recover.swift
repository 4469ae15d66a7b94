import ArgumentParser
import DBCrypt
import Foundation
import SQLCipherFormat

/// `dbcrypt recover`: salvage what authenticates of a damaged encrypted database.
struct Recover: ParsableCommand {
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

    @Argument(help: "The damaged encrypted database.")
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
            let file = try pageFormat.open(database, key: try key.key(prompt: "Key for \(database): "), cipher: cipher)
            var options = ExportOptions()
            options.replaceExisting = force
            var summary: DecryptionSummary?
            var salvage = Salvage()
            try DatabaseEncryption.replaceFile(at: output, source: database, options: options, write: { newFile in
                let pages = newFile + "-pages"
                defer { unlink(pages) }
                summary = try file.recoverPages(to: pages)
                try salvage.rebuild(from: pages, into: newFile)
            }, check: checkPlaintext)
            guard let summary else { return }
            var lines = ["Recovered \(database) to \(output):"]
            lines += salvage.tables.map { "  \($0.name): \($0.rows) rows" }
            if salvage.orphans > 0 { lines.append("  lost_and_found: \(salvage.orphans) rows whose table could not be told") }
            lines += salvage.notes.map { "  note: \($0)" }
            let zeroed = summary.zeroedPages
            if !zeroed.isEmpty {
                lines.append("\(zeroed.count) of \(summary.pageCount) pages did not authenticate and were lost (\(SQLCipherFormatError.list(zeroed))).")
            } else if file.settings.usesHMAC {
                lines.append("Every one of the \(summary.pageCount) pages authenticated.")
            } else {
                // Nothing vouches for pages without an HMAC: they are not called authentic.
                lines.append("Every one of the \(summary.pageCount) pages decrypted; SQLCipher 1 pages carry no HMAC, so whether they were altered cannot be verified.")
            }
            try StandardStreams.say(lines.joined(separator: "\n"))
        }
    }
}

/// Rebuilds a database from a page-level copy whose damaged pages are zeros,
/// reading rows with the page reader's scanner and writing them with SQLite.
struct Salvage {
    /// The tables rebuilt and their row counts, in schema order.
    private(set) var tables: [(name: String, rows: Int)] = []
    /// Rows put in lost_and_found.
    private(set) var orphans = 0
    /// What could not be rebuilt, one sentence each.
    private(set) var notes: [String] = []

    mutating func rebuild(from pages: String, into output: String) throws {
        let scanner = try PageScanner(path: pages)
        let schema = (try? scanner.schema()) ?? []
        let db = try Database(path: output)
        defer { db.close() }
        try db.inTransaction { db in
            for entry in schema where entry.type == "table" && !entry.name.hasPrefix("sqlite_") {
                guard let sql = entry.sql, (try? db.execute(sql)) != nil else {
                    notes.append("table \(entry.name) could not be created again; its rows are in lost_and_found")
                    continue
                }
                var rows = 0
                let insert = try insertStatement(db, table: entry.name)
                try scanner.rows(ofTreeAt: entry.rootPage) { rowid, values in
                    try db.execute(insert.sql, StatementArguments(insert.arguments(rowid, values)))
                    rows += 1
                }
                tables.append((entry.name, rows))
            }
            for entry in schema where ["index", "view", "trigger"].contains(entry.type) {
                guard let sql = entry.sql else { continue }
                if (try? db.execute(sql)) == nil { notes.append("\(entry.type) \(entry.name) could not be created again") }
            }
            try rebuildOrphans(scanner, db)
        }
    }

    private mutating func rebuildOrphans(_ scanner: PageScanner, _ db: Database) throws {
        var widest = 0
        try scanner.orphanRows { _, _, values in widest = max(widest, values.count) }
        guard widest > 0 else { return }
        let columns = (0..<widest).map { "c\($0)" }
        try db.execute("CREATE TABLE lost_and_found(page INTEGER, id INTEGER, " + columns.joined(separator: ", ") + ")")
        let sql = "INSERT INTO lost_and_found VALUES (" + Array(repeating: "?", count: widest + 2).joined(separator: ", ") + ")"
        try scanner.orphanRows { page, rowid, values in
            let padded = values.map(DatabaseValue.init) + Array(repeating: .null, count: widest - values.count)
            try db.execute(sql, StatementArguments([DatabaseValue.integer(Int64(page)), .integer(rowid)] + padded))
            orphans += 1
        }
    }

    /// The INSERT that puts one salvaged row back: every column of the table,
    /// the rowid as well (or as the INTEGER PRIMARY KEY, whose record value is NULL).
    private func insertStatement(_ db: Database, table: String) throws -> RowInsert {
        let quoted = quote(table)
        let columns = try db.fetchAll("PRAGMA table_info(\(quoted))")
        let names: [String] = try columns.map { try $0[1] }
        let keys = try columns.filter { try ($0[5] as Int) > 0 }
        let rowidColumn = try keys.count == 1 && (keys[0][2] as String).uppercased() == "INTEGER"
            ? names.firstIndex(of: try keys[0][1] as String) : nil
        let list = (rowidColumn == nil ? ["rowid"] : []) + names.map(quote)
        let sql = "INSERT INTO \(quoted)(" + list.joined(separator: ", ") + ") VALUES ("
            + Array(repeating: "?", count: list.count).joined(separator: ", ") + ")"
        return RowInsert(sql: sql, columnCount: names.count, rowidColumn: rowidColumn)
    }

    private func quote(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
}

/// An INSERT for one table, and how a salvaged row's values fill it.
struct RowInsert {
    let sql: String
    let columnCount: Int
    /// The INTEGER PRIMARY KEY column, which holds the rowid; nil when the rowid is given apart.
    let rowidColumn: Int?

    /// The arguments for a row: its values, padded with NULL to the table's
    /// columns (a record written before ALTER TABLE ADD COLUMN is shorter), the rowid in its place.
    func arguments(_ rowid: Int64, _ values: [SalvagedValue]) -> [(any DatabaseValueConvertible)?] {
        var row = values.prefix(columnCount).map(DatabaseValue.init) + Array(repeating: .null, count: max(0, columnCount - values.count))
        if let rowidColumn { row[rowidColumn] = .integer(rowid) } else { row.insert(.integer(rowid), at: 0) }
        return row.map { $0 }
    }
}

extension DatabaseValue {
    /// A salvaged value as a value to bind.
    init(_ value: SalvagedValue) {
        switch value {
        case .null: self = .null
        case let .integer(v): self = .integer(v)
        case let .real(v): self = .real(v)
        case let .text(v): self = .text(v)
        case let .blob(v): self = .blob(Data(v))
        }
    }
}
