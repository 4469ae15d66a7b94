import Foundation

extension EncryptedDatabaseFile {
    /// Salvages what authenticates of a damaged database into `destination`:
    /// every page that authenticates is decrypted into `scratch` (a file
    /// removed after), the others set aside; then each table is rebuilt
    /// with its own CREATE statement and the rows its b-tree still reaches,
    /// rowids kept, then its indexes, views and triggers, all in one
    /// transaction. Rows on table pages whose parent page was lost (or all
    /// rows, when the schema on page 1 was) go to `lost_and_found(page, id,
    /// c0, c1, ...)`, with the page they were on; so do the rows of a table
    /// that cannot be created again (a collation this process lacks, say),
    /// and rows their table refuses (a constraint the damage broke), without
    /// a page. Rows on damaged pages are lost, and so are the rows of a
    /// WITHOUT ROWID table under an interior page that was lost.
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
            var lostAndFound = LostAndFound()
            let tables = schema.filter { $0.type == "table" && !$0.name.hasPrefix("sqlite_") }
            for entry in tables where !entry.isVirtualTable {
                let created = entry.sql.map { (try? destination.execute($0, [])) != nil } ?? false
                if !created { report.notes.append("table \(entry.name) could not be created again; its rows are in lost_and_found") }
                var (rows, refused, firstRefusal) = (0, 0, "")
                var insert: RowInsert?
                try scanner.rows(ofTreeAt: entry.rootPage) { rowid, values in
                    guard created else { return try lostAndFound.put(nil, rowid, values, into: destination) }
                    // The walk says which kind of table it is: a WITHOUT ROWID table's rows have no rowid.
                    let statement = try insert ?? RowInsert(destination, table: entry.name, hasRowid: rowid != nil)
                    insert = statement
                    let (sql, arguments) = statement.insertion(rowid, values)
                    do {
                        try destination.execute(sql, arguments)
                        rows += 1
                    } catch {
                        if refused == 0 { firstRefusal = "\(error)" }
                        refused += 1
                        try lostAndFound.put(nil, rowid, values, into: destination)
                    }
                }
                guard created else { continue }
                report.tables.append((entry.name, rows))
                if refused > 0 {
                    report.notes.append("table \(entry.name) refused \(refused) rows (\(firstRefusal)); they are in lost_and_found")
                }
            }
            for entry in schema where ["index", "view", "trigger"].contains(entry.type) {
                guard let sql = entry.sql else { continue }
                if (try? destination.execute(sql, [])) == nil { report.notes.append("\(entry.type) \(entry.name) could not be created again") }
            }
            try scanner.orphanRows { page, rowid, values in try lostAndFound.put(page, rowid, values, into: destination) }
            report.orphans = lostAndFound.count
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
}

/// `lost_and_found(page, id, c0, c1, ...)`: rows whose table could not be
/// told, or that their table did not take. Made with the first such row,
/// and given more columns when a wider row comes.
private struct LostAndFound {
    /// Rows put in it.
    private(set) var count = 0
    /// Its value columns, `c0` to `c<width - 1>`; nil until it is made.
    private var width: Int?
    /// The INSERT of a row of so many values.
    private var inserts: [Int: String] = [:]

    /// Puts a row in it: the page it was on (nil: read from its table's
    /// b-tree), its rowid (nil in a WITHOUT ROWID table) and its values.
    mutating func put(_ page: Int?, _ rowid: Int64?, _ values: [SalvagedValue], into destination: some SalvageDestination) throws {
        if let width {
            for column in width..<max(width, values.count) {
                try destination.execute("ALTER TABLE lost_and_found ADD COLUMN c\(column)", [])
            }
        } else {
            let columns = (0..<max(1, values.count)).map { "c\($0)" }
            try destination.execute("CREATE TABLE lost_and_found(page INTEGER, id INTEGER, " + columns.joined(separator: ", ") + ")", [])
        }
        width = max(width ?? 1, values.count)
        let sql = inserts[values.count] ?? {
            let names = ["page", "id"] + values.indices.map { "c\($0)" }
            return "INSERT INTO lost_and_found(" + names.joined(separator: ", ") + ") VALUES (" + Array(repeating: "?", count: names.count).joined(separator: ", ") + ")"
        }()
        inserts[values.count] = sql
        try destination.execute(sql, [page.map { .integer(Int64($0)) } ?? .null, rowid.map { .integer($0) } ?? .null] + values)
        count += 1
    }
}

/// How a salvaged row goes back into its table. A table's record holds
/// every column but its virtual generated ones: a rowid table's in the
/// table's order, with NULL in an INTEGER PRIMARY KEY (which holds the
/// rowid), a WITHOUT ROWID table's primary key columns first, then the
/// others. Stored generated columns are in the record but computed again.
/// A record shorter than the table (written before ALTER TABLE ADD COLUMN)
/// leaves the columns it does not reach to their defaults.
private final class RowInsert {
    private let table: String
    /// For each value of a record, the column it fills (quoted), or nil: a
    /// stored generated column, not inserted.
    private let columns: [String?]
    /// Where in a record the INTEGER PRIMARY KEY is: the rowid goes there
    /// when the record holds NULL (one declared DESC is not the rowid, and holds its value).
    private let rowidAlias: Int?
    /// A name for the rowid that no column of the table takes.
    private let rowidName: String
    /// The statements made so far, by the values a record reaches and whether the rowid goes apart.
    private var statements: [Int: String] = [:]

    init(_ destination: some SalvageDestination, table: String, hasRowid: Bool) throws {
        self.table = SQLIdentifier.quoted(table)
        // cid, name, type, notnull, dflt_value, pk, and from SQLite 3.26 (table_xinfo) hidden:
        // 2 a virtual generated column, 3 a stored one. Older SQLite ignores table_xinfo.
        var info = try destination.rows("PRAGMA table_xinfo(\(self.table))")
        if info.isEmpty { info = try destination.rows("PRAGMA table_info(\(self.table))") }
        let hidden = info.map { $0.count > 6 ? Self.integer($0[6]) : 0 }
        let keyPositions = info.map { Self.integer($0[5]) }
        var stored = info.indices.filter { hidden[$0] != 2 }
        if !hasRowid {
            stored = stored.filter { keyPositions[$0] > 0 }.sorted { keyPositions[$0] < keyPositions[$1] } + stored.filter { keyPositions[$0] == 0 }
        }
        let keys = info.indices.filter { keyPositions[$0] > 0 }
        let alias = hasRowid && keys.count == 1 && Self.text(info[keys[0]][2]).uppercased() == "INTEGER" ? keys[0] : nil
        columns = stored.map { hidden[$0] == 3 ? nil : SQLIdentifier.quoted(Self.text(info[$0][1])) }
        rowidAlias = alias.flatMap { stored.firstIndex(of: $0) }
        let names = Set(info.map { Self.text($0[1]).lowercased() })
        rowidName = ["rowid", "_rowid_", "oid"].first { !names.contains($0) } ?? "rowid"
    }

    /// The INSERT for a row of `values` with `rowid` (nil in a WITHOUT ROWID table), and its arguments.
    func insertion(_ rowid: Int64?, _ values: [SalvagedValue]) -> (sql: String, arguments: [SalvagedValue]) {
        let reached = min(values.count, columns.count)
        var arguments: [SalvagedValue] = []
        arguments.reserveCapacity(reached + 1)
        var rowidApart = rowid != nil
        for index in 0..<reached where columns[index] != nil {
            if index == rowidAlias, values[index] == .null, let rowid {
                arguments.append(.integer(rowid))
                rowidApart = false
            } else {
                arguments.append(values[index])
            }
        }
        if rowidApart, let rowid { arguments.insert(.integer(rowid), at: 0) }
        let key = reached * 2 + (rowidApart ? 1 : 0)
        if let sql = statements[key] { return (sql, arguments) }
        let names = (rowidApart ? [rowidName] : []) + columns.prefix(reached).compactMap { $0 }
        let sql = "INSERT INTO \(table)(" + names.joined(separator: ", ") + ") VALUES (" + Array(repeating: "?", count: names.count).joined(separator: ", ") + ")"
        statements[key] = sql
        return (sql, arguments)
    }

    private static func text(_ value: SalvagedValue) -> String {
        if case let .text(text) = value { text } else { "" }
    }

    private static func integer(_ value: SalvagedValue) -> Int64 {
        if case let .integer(integer) = value { integer } else { 0 }
    }
}
