import CSQLCipher

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
    /// index; one that cannot (an FTS4 table without content, whose index
    /// nothing can be compared with) answers "unable to validate the
    /// inverted index", on an intact database too. That says the check did
    /// not run, not that something is wrong, so it is not a problem here;
    /// an index found wrong ("malformed inverted index") is.
    ///
    /// - throws: ``DatabaseError/connectionClosed``, or SQLite's error when
    ///   the check could not start (the database is busy, say).
    public func integrityProblems(quick: Bool = false) throws -> [String] {
        do {
            return try fetchAll(String.self, quick ? "PRAGMA quick_check" : "PRAGMA integrity_check")
                .filter { $0 != "ok" && !$0.hasPrefix("unable to validate the inverted index for FTS") }
        } catch let DatabaseError.sqlite(code, message, _)
                    where [SQLITE_CORRUPT, SQLITE_NOTADB].contains(code & 0xFF) || (cipher != nil && Connection.isBareLogicError(code, message)) {
            return ["a page could not be read (\(message))"]
        }
    }

    /// Each table of the main database and its rows, by name: what the
    /// routines check a copy against and `describe` reports. Virtual tables
    /// are left out: their module may be missing from this SQLite (FTS5 on
    /// 3.4.1), and their rows are in their shadow tables, which are counted.
    ///
    /// - throws: SQLite's error when a table cannot be read.
    func tableRowCounts() throws -> [(name: String, rows: Int)] {
        try fetchAll(String.self, """
            SELECT name FROM main.sqlite_master WHERE type = 'table' AND upper(coalesce(sql, '')) NOT LIKE 'CREATE VIRTUAL%' ORDER BY name
            """).map { name in (name, try fetchScalar(Int.self, "SELECT count(*) FROM main.\(SQLIdentifier.quoted(name))") ?? 0) }
    }
}
