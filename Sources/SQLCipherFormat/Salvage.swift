import Foundation

extension EncryptedDatabaseFile {
    /// Salvages what authenticates of a damaged database into `destination`:
    /// every page that authenticates is decrypted into `scratch` (a file
    /// removed after), the others set aside; then each table is rebuilt
    /// with its own CREATE statement and the rows its b-tree still reaches,
    /// rowids kept, then its indexes, views and triggers, all in one
    /// transaction. Rows on table pages whose parent page was lost (or all
    /// rows, when the schema on page 1 was) go to `lost_and_found(page, id,
    /// c0, c1, ...)`, with the page they were on. Rows on damaged pages are lost.
    ///
    /// - throws: ``SQLCipherFormatError`` (`destinationExists` for `scratch`,
    ///   `cannotWrite`, `cannotRead`, `cancelled`), and what `destination` throws.
    public func salvage(into destination: some SalvageDestination, scratch: String,
                        progress: (@Sendable (JobProgress) -> Void)? = nil, cancellation: JobCancellation? = nil) throws -> SalvageReport {
        // A scratch file that exists is refused by recoverPages, and stays: only the one made here goes.
        let pages = try recoverPages(to: scratch, progress: progress, cancellation: cancellation)
        defer { unlink(scratch) }
        var report = SalvageReport(pages: pages, authenticated: settings.usesHMAC)
        let scanner = try PageScanner(path: scratch)
        let schema = (try? scanner.schema()) ?? []
        try destination.execute("BEGIN", [])
        do {
            for entry in schema where entry.type == "table" && !entry.name.hasPrefix("sqlite_") {
                guard let sql = entry.sql, (try? destination.execute(sql, [])) != nil else {
                    report.notes.append("table \(entry.name) could not be created again; its rows are in lost_and_found")
                    continue
                }
                var rows = 0
                let insert = try RowInsert(destination, table: entry.name)
                try scanner.rows(ofTreeAt: entry.rootPage) { rowid, values in
                    try destination.execute(insert.sql, insert.arguments(rowid, values))
                    rows += 1
                }
                report.tables.append((entry.name, rows))
            }
            for entry in schema where ["index", "view", "trigger"].contains(entry.type) {
                guard let sql = entry.sql else { continue }
                if (try? destination.execute(sql, [])) == nil { report.notes.append("\(entry.type) \(entry.name) could not be created again") }
            }
            report.orphans = try Self.rebuildOrphans(scanner, destination)
            try destination.execute("COMMIT", [])
        } catch {
            try? destination.execute("ROLLBACK", [])
            throw error
        }
        return report
    }

    /// Puts the rows no table reaches in `lost_and_found`; returns how many.
    private static func rebuildOrphans(_ scanner: PageScanner, _ destination: some SalvageDestination) throws -> Int {
        var widest = 0
        try scanner.orphanRows { _, _, values in widest = max(widest, values.count) }
        guard widest > 0 else { return 0 }
        let columns = (0..<widest).map { "c\($0)" }
        try destination.execute("CREATE TABLE lost_and_found(page INTEGER, id INTEGER, " + columns.joined(separator: ", ") + ")", [])
        let sql = "INSERT INTO lost_and_found VALUES (" + Array(repeating: "?", count: widest + 2).joined(separator: ", ") + ")"
        var orphans = 0
        try scanner.orphanRows { page, rowid, values in
            let padded = values + Array(repeating: .null, count: widest - values.count)
            try destination.execute(sql, [.integer(Int64(page)), .integer(rowid)] + padded)
            orphans += 1
        }
        return orphans
    }
}

/// The INSERT that puts one salvaged row back into a table, and how a row's
/// values fill it: every column of the table, the rowid as well (or as the
/// INTEGER PRIMARY KEY, whose record value is NULL).
private struct RowInsert {
    let sql: String
    let columnCount: Int
    /// The INTEGER PRIMARY KEY column, which holds the rowid; nil when the rowid is given apart.
    let rowidColumn: Int?

    init(_ destination: some SalvageDestination, table: String) throws {
        let quoted = Self.quote(table)
        // PRAGMA table_info: cid, name, type, notnull, dflt_value, pk.
        let columns = try destination.rows("PRAGMA table_info(\(quoted))")
        let names = columns.map { Self.text($0[1]) }
        let keys = columns.filter { if case let .integer(pk) = $0[5] { pk > 0 } else { false } }
        rowidColumn = keys.count == 1 && Self.text(keys[0][2]).uppercased() == "INTEGER" ? names.firstIndex(of: Self.text(keys[0][1])) : nil
        let list = (rowidColumn == nil ? ["rowid"] : []) + names.map(Self.quote)
        sql = "INSERT INTO \(quoted)(" + list.joined(separator: ", ") + ") VALUES (" + Array(repeating: "?", count: list.count).joined(separator: ", ") + ")"
        columnCount = names.count
    }

    /// The arguments for a row: its values, padded with NULL to the table's
    /// columns (a record written before ALTER TABLE ADD COLUMN is shorter), the rowid in its place.
    func arguments(_ rowid: Int64, _ values: [SalvagedValue]) -> [SalvagedValue] {
        var row = Array(values.prefix(columnCount)) + Array(repeating: .null, count: max(0, columnCount - values.count))
        if let rowidColumn { row[rowidColumn] = .integer(rowid) } else { row.insert(.integer(rowid), at: 0) }
        return row
    }

    private static func quote(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    private static func text(_ value: SalvagedValue) -> String {
        if case let .text(text) = value { text } else { "" }
    }
}
