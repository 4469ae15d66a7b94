import CSQLCipher

/// A lazy cursor over the rows of a query: each call to ``next()`` steps the
/// statement once.
///
/// ```swift
/// let cursor = try db.query("SELECT id, title FROM note")
/// while let row = try cursor.next() {
///     print(try row["title"] as String)
/// }
/// ```
///
/// The row returned by ``next()`` is valid until the next call. Finishing or
/// releasing the cursor resets its statement, which releases SQLite's read lock.
public final class RowCursor {
    // Internal, but rows read the statement from inlined code.
    @usableFromInline let statement: Statement
    private var finished = false

    init(statement: Statement) {
        self.statement = statement
    }

    deinit {
        if !finished { sqlite3_reset(statement.handle) }
    }

    /// The names of the result columns.
    public var columnNames: [String] { statement.columnNames }

    /// The next row, or nil when there are no more.
    ///
    /// - throws: the ``DatabaseError`` SQLite reports while stepping.
    public func next() throws -> Row? {
        guard !finished else { return nil }
        do {
            if try statement.step() { return Row(cursor: self) }
        } catch {
            finished = true
            throw error
        }
        finished = true
        sqlite3_reset(statement.handle)
        return nil
    }

    /// Calls `body` with each remaining row.
    ///
    /// - throws: what SQLite or `body` throws.
    public func forEach(_ body: (Row) throws -> Void) throws {
        while let row = try next() { try body(row) }
    }

    /// Copies of all remaining rows.
    ///
    /// - throws: the ``DatabaseError`` SQLite reports while stepping.
    public func all() throws -> [Row] {
        var rows: [Row] = []
        while let row = try next() { rows.append(row.copy()) }
        return rows
    }
}
