extension Database {
    /// Runs every statement of `sql` in order, as a shell does: a statement
    /// that returns rows is handed to `rows` as a cursor (rows the closure
    /// does not read are still stepped through, so the statement completes);
    /// the others are executed.
    ///
    /// ```swift
    /// try db.executeScript("CREATE TABLE t(x); INSERT INTO t VALUES (1); SELECT * FROM t") { cursor in
    ///     while let row = try cursor.next() { print(row[0]) }
    /// }
    /// ```
    /// - throws: the ``DatabaseError`` of the first statement that fails; the
    ///   statements before it stay executed.
    public func executeScript(_ sql: String, rows: (RowCursor) throws -> Void) throws {
        try Statement.forEach(in: sql, on: connection) { statement, _ in
            guard statement.columnCount > 0 else { return try statement.execute() }
            let cursor = try statement.query()
            try rows(cursor)
            while try cursor.next() != nil {}
        }
    }
}
