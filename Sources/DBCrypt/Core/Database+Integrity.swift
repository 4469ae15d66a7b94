import CSQLCipher
import Foundation

extension Database {
    /// What SQLite's `integrity_check` (with `quick`, `quick_check`, which
    /// reads every page in use but skips comparing indexes with their
    /// tables) finds wrong with the main database: an empty array when it is
    /// whole. On an encrypted database every page is authenticated as it is
    /// read, so a page that fails its HMAC is a problem here.
    ///
    /// A check that cannot run to its end because a page cannot be read is
    /// a problem too, not an error: SQLCipher 4.6 ends the check of an
    /// encrypted database with a bare "SQL logic error" after a page fails
    /// its HMAC, where 3.4.1 and 4.19 list the pages. (Any other error, a
    /// collation or function an index needs and this process lacks, say, is
    /// thrown.)
    ///
    /// From SQLite 3.44 the check asks each full-text table to check its
    /// index. An FTS4 table without content (`content=''`) cannot: nothing
    /// holds what its index was made from, and it answers "unable to
    /// validate the inverted index ...: SQL logic error", on an intact
    /// database too. That line alone is not a problem here; an index that
    /// cannot be read ("...: database disk image is malformed") or that
    /// disagrees with its content ("malformed inverted index") is.
    ///
    /// - throws: ``DatabaseError/connectionClosed``, or SQLite's error when
    ///   the check could not start (the database is busy, say).
    public func integrityProblems(quick: Bool = false) throws -> [String] {
        do {
            return try fetchAll(String.self, quick ? "PRAGMA quick_check" : "PRAGMA integrity_check")
                .filter { try $0 != "ok" && !saysAnIndexWithoutContentCannotBeChecked($0) }
        } catch let DatabaseError.sqlite(code, message, _)
                    where [SQLITE_CORRUPT, SQLITE_NOTADB].contains(code & 0xFF) || (cipher != nil && Connection.isBareLogicError(code, message)) {
            return ["a page could not be read (\(message))"]
        }
    }

    /// Whether `line`, from the integrity check, is what SQLite says of an
    /// FTS4 table of the main database made with `content=''`.
    private func saysAnIndexWithoutContentCannotBeChecked(_ line: String) throws -> Bool {
        let (prefix, suffix) = ("unable to validate the inverted index for FTS4 table main.", ": SQL logic error")
        guard line.hasPrefix(prefix), line.hasSuffix(suffix) else { return false }
        let name = String(line.dropFirst(prefix.count).dropLast(suffix.count))
        let sql = try fetchScalar(String.self, "SELECT sql FROM main.sqlite_master WHERE type = 'table' AND name = ?", [name]) ?? ""
        return sql.range(of: #"content\s*=\s*(''|"")"#, options: [.regularExpression, .caseInsensitive]) != nil
    }

    /// Each table of the main database and its rows, by name: what the
    /// routines check a copy against and `describe` reports. Virtual tables
    /// are left out: their module may be missing from this SQLite (FTS5 on
    /// 3.4.1), and their rows are in their shadow tables, which are counted.
    ///
    /// - throws: SQLite's error when a table cannot be read.
    func tableRowCounts() throws -> [(name: String, rows: Int)] {
        try fetchAll(String.self, """
            SELECT name FROM main.sqlite_master WHERE type = 'table' AND NOT \(SchemaStatement.makesVirtualTableSQL) ORDER BY name
            """).map { name in (name, try fetchScalar(Int.self, "SELECT count(*) FROM main.\(SQLIdentifier.quoted(name))") ?? 0) }
    }
}
