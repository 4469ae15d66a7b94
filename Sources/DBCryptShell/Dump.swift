import DBCrypt

extension Shell {
    /// `.dump [TABLE]`: the schema and rows as SQL text that rebuilds the
    /// database (or one table) in one transaction, as the sqlite3 shell
    /// writes it. Values are written by SQLite's `quote()`, infinities as
    /// `9.0e+999`; control characters as `escape` says (on a terminal, so
    /// that what the database holds cannot drive it).
    ///
    /// A virtual table is written as its schema row, under
    /// `PRAGMA writable_schema`, and its shadow tables as the tables they
    /// are, rows and all, as sqlite3 writes them: rows inserted again through
    /// the module would get new rowids (an FTS table's `docid`), and a
    /// table without content would come back empty. `.dump TABLE` of a
    /// virtual table takes its shadow tables along.
    func dump(table: String?, escape: OutputEscape = .off) throws {
        func write(_ text: String) throws { try output.write(escape.apply(text)) }
        try queue.inDatabase { db in
            Interrupts.target(try db.interrupter, seen: interruptsSeen)
            defer { Interrupts.target(nil) }
            try write("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n")
            // Tables first (with their rows), then indexes, triggers and views in the order they were made.
            let all = try db.fetchAll("""
                SELECT type, name, tbl_name, sql FROM sqlite_master
                WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                ORDER BY CASE type WHEN 'table' THEN 0 ELSE 1 END, rowid
                """).map { row in
                    (type: try row["type"] as String, name: try row["name"] as String, table: try row["tbl_name"] as String, sql: try row["sql"] as String)
                }
            var entries = all
            if let table {
                let chosen = try db.fetchAll(String.self, "SELECT name FROM sqlite_master WHERE tbl_name LIKE ?", [table])
                let virtual = all.filter { chosen.contains($0.name) && SchemaStatement.makesVirtualTable($0.sql) }.map(\.name)
                entries = all.filter { entry in
                    chosen.contains(entry.name) || virtual.contains { Self.isShadow(entry.table, of: $0) }
                }
            }
            var writesSchema = false
            for entry in entries {
                if entry.type == "table", SchemaStatement.makesVirtualTable(entry.sql) {
                    if !writesSchema { try write("PRAGMA writable_schema=ON;\n") }
                    writesSchema = true
                    let (name, sql) = (Self.literal(entry.name), Self.literal(entry.sql))
                    try write("INSERT INTO sqlite_master(type,name,tbl_name,rootpage,sql)VALUES('table',\(name),\(name),0,\(sql));\n")
                    continue
                }
                try write(entry.sql + ";\n")
                if entry.type == "table" { try dumpRows(of: entry.name, in: db, write) }
            }
            if table == nil, try db.fetchScalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'") == 1 {
                try write("DELETE FROM sqlite_sequence;\n")
                try dumpRows(of: "sqlite_sequence", in: db, write)
            }
            if writesSchema { try write("PRAGMA writable_schema=OFF;\n") }
            try write("COMMIT;\n")
        }
    }

    /// `text` as an SQL string literal.
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// Whether `table` is one of the tables that the virtual table
    /// `virtual` keeps its data in (FTS3/4/5's and R*Tree's).
    static func isShadow(_ table: String, of virtual: String) -> Bool {
        let suffixes = ["content", "segments", "segdir", "docsize", "stat", "data", "idx", "config", "node", "parent", "rowid"]
        return suffixes.contains { table.caseInsensitiveCompare(virtual + "_" + $0) == .orderedSame }
    }

    private func dumpRows(of table: String, in db: Database, _ write: (String) throws -> Void) throws {
        let quoted = SQLIdentifier.quoted(table)
        let columns = try Shell.columnNames(of: quoted, in: db)
        guard !columns.isEmpty else { return }
        // SQLite 3.15's quote() writes an infinite real as Inf, which SQL does not read back: 9.0e+999 does.
        let values = columns.map { column in
            let name = SQLIdentifier.quoted(column)
            // typeof first: in a TEXT column 9e999 compares as the text 'Inf' (and 'inf' under NOCASE).
            return "CASE WHEN typeof(\(name)) = 'real' AND abs(\(name)) = 9e999 THEN (CASE WHEN \(name) > 0 THEN '9.0e+999' ELSE '-9.0e+999' END) "
                + "ELSE quote(\(name)) END"
        }.joined(separator: " || ',' || ")
        let cursor = try db.query("SELECT \(values) FROM \(quoted)")
        var text = ""
        while let row = try cursor.next() {
            text += "INSERT INTO \(quoted) VALUES(" + (try row[0] as String) + ");\n"
            if text.utf8.count > 65536 {
                try write(text)
                text = ""
            }
        }
        try write(text)
    }
}

extension Shell {
    /// The column names of the table `quoted` (an SQL name in quotes), from
    /// `PRAGMA table_info` (SQLite 3.15 has no `pragma_table_info()`).
    static func columnNames(of quoted: String, in db: Database) throws -> [String] {
        try db.fetchAll("PRAGMA table_info(\(quoted))").map { try $0["name"] }
    }
}
