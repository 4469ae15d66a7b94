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
    /// A virtual table's rows are in its shadow tables (an FTS table's
    /// `_content`, `_segments`...), which are rebuilt as the tables they
    /// are; the virtual table's schema row is written last, as the file
    /// held it, so that its module never runs (as sqlite3's `.recover`
    /// does). It is not in the report's tables.
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
            let tables = schema.filter { $0.type == "table" && !$0.name.hasPrefix("sqlite_") }
            for entry in tables where !entry.isVirtualTable {
                guard let sql = entry.sql, (try? destination.execute(sql, [])) != nil else {
                    report.notes.append("table \(entry.name) could not be created again; its rows are in lost_and_found")
                    continue
                }
                var rows = 0
                var insert: RowInsert?
                try scanner.rows(ofTreeAt: entry.rootPage) { rowid, values in
                    // The walk says which kind of table it is: a WITHOUT ROWID table's rows have no rowid.
                    let statement = try insert ?? RowInsert(destination, table: entry.name, hasRowid: rowid != nil)
                    insert = statement
                    try destination.execute(statement.sql, statement.arguments(rowid, values))
                    rows += 1
                }
                report.tables.append((entry.name, rows))
            }
            for entry in schema where ["index", "view", "trigger"].contains(entry.type) {
                guard let sql = entry.sql else { continue }
                if (try? destination.execute(sql, [])) == nil { report.notes.append("\(entry.type) \(entry.name) could not be created again") }
            }
            report.orphans = try Self.rebuildOrphans(scanner, destination)
            try Self.writeSchemaRows(of: tables.filter(\.isVirtualTable), destination, &report)
            try destination.execute("COMMIT", [])
        } catch {
            try? destination.execute("ROLLBACK", [])
            throw error
        }
        return report
    }

    /// Writes each virtual table's schema row as the file held it, its
    /// module not run: its shadow tables are already rebuilt.
    private static func writeSchemaRows(of virtualTables: [SalvagedSchemaEntry], _ destination: some SalvageDestination,
                                        _ report: inout SalvageReport) throws {
        guard !virtualTables.isEmpty else { return }
        try destination.execute("PRAGMA writable_schema = ON", [])
        for entry in virtualTables {
            let row = "INSERT INTO sqlite_master(type, name, tbl_name, rootpage, sql) VALUES ('table', ?, ?, 0, ?)"
            if (try? destination.execute(row, [.text(entry.name), .text(entry.tableName), .text(entry.sql ?? "")])) == nil {
                report.notes.append("virtual table \(entry.name) could not be created again; its shadow tables hold its rows")
            }
        }
        try destination.execute("PRAGMA writable_schema = OFF", [])
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
/// values fill it. A table's record holds every column but its virtual
/// generated ones: a rowid table's in the table's order (NULL for an
/// INTEGER PRIMARY KEY, which holds the rowid), a WITHOUT ROWID table's
/// primary key columns first, then the others. Stored generated columns
/// are in the record but computed again, not inserted.
private struct RowInsert {
    let sql: String
    /// For each value of a record, the argument it becomes (nil: left out).
    let arguments: [Int?]
    let argumentCount: Int
    /// The argument that holds the rowid (nil for a WITHOUT ROWID table).
    let rowidArgument: Int?

    init(_ destination: some SalvageDestination, table: String, hasRowid: Bool) throws {
        let quoted = SQLIdentifier.quoted(table)
        // cid, name, type, notnull, dflt_value, pk, and from SQLite 3.26 (table_xinfo) hidden:
        // 2 a virtual generated column, 3 a stored one. Older SQLite ignores table_xinfo.
        var columns = try destination.rows("PRAGMA table_xinfo(\(quoted))")
        if columns.isEmpty { columns = try destination.rows("PRAGMA table_info(\(quoted))") }
        let hidden = columns.map { $0.count > 6 ? Self.integer($0[6]) : 0 }
        var stored = columns.indices.filter { hidden[$0] != 2 }
        let keyPositions = columns.map { Self.integer($0[5]) }
        if !hasRowid {
            let key = stored.filter { keyPositions[$0] > 0 }.sorted { keyPositions[$0] < keyPositions[$1] }
            stored = key + stored.filter { keyPositions[$0] == 0 }
        }
        let keys = columns.indices.filter { keyPositions[$0] > 0 }
        let rowidColumn = hasRowid && keys.count == 1 && Self.text(columns[keys[0]][2]).uppercased() == "INTEGER" ? keys[0] : nil
        var names = hasRowid && rowidColumn == nil ? ["rowid"] : []
        var arguments: [Int?] = []
        var rowidArgument: Int? = hasRowid && rowidColumn == nil ? 0 : nil
        for column in stored {
            if hidden[column] == 3 { arguments.append(nil); continue }
            if column == rowidColumn { rowidArgument = names.count }
            arguments.append(names.count)
            names.append(SQLIdentifier.quoted(Self.text(columns[column][1])))
        }
        (self.arguments, argumentCount, self.rowidArgument) = (arguments, names.count, rowidArgument)
        sql = "INSERT INTO \(quoted)(" + names.joined(separator: ", ") + ") VALUES (" + Array(repeating: "?", count: names.count).joined(separator: ", ") + ")"
    }

    /// The arguments for a row: its values in their columns, NULL for a
    /// column the record does not reach (a record written before ALTER TABLE
    /// ADD COLUMN is shorter), the rowid in its place.
    func arguments(_ rowid: Int64?, _ values: [SalvagedValue]) -> [SalvagedValue] {
        var row = [SalvagedValue](repeating: .null, count: argumentCount)
        for (value, argument) in zip(values, arguments) { if let argument { row[argument] = value } }
        if let rowid, let rowidArgument { row[rowidArgument] = .integer(rowid) }
        return row
    }

    private static func text(_ value: SalvagedValue) -> String {
        if case let .text(text) = value { text } else { "" }
    }

    private static func integer(_ value: SalvagedValue) -> Int64 {
        if case let .integer(integer) = value { integer } else { 0 }
    }
}
