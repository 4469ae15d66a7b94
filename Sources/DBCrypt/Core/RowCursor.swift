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
/// Like every ``Cursor`` it has `forEach`, `map`, `compactMap`, `first(where:)`,
/// `contains(where:)` and `reduce`, which throw where stepping can fail.
public final class RowCursor: Cursor {
    let statement: Statement
    /// The statement's handle and columns, read once: each row uses them.
    let handle: OpaquePointer
    let layout: ColumnLayout
    @usableFromInline let columnCount: Int
    private let connection: Connection
    private var finished = false {
        didSet { if finished { statement.isStepping = false } }
    }

    init(statement: Statement, finished: Bool = false) {
        self.statement = statement
        handle = statement.handle
        layout = statement.columns
        columnCount = layout.names.count
        connection = statement.connection
        self.finished = finished
        statement.isStepping = !finished
    }

    deinit {
        if !finished {
            sqlite3_reset(handle)
            statement.isStepping = false
        }
    }

    /// The names of the result columns.
    public var columnNames: [String] { statement.columnNames }

    /// The next row, or nil when there are no more.
    ///
    /// - throws: the ``DatabaseError`` SQLite reports while stepping.
    public func next() throws -> Row? {
        guard !finished else { return nil }
        guard !connection.isClosed else {
            finished = true
            throw DatabaseError.connectionClosed
        }
        statement.noteWrites()
        let watchStart = connection.upgradeWatchStart(handle)
        switch sqlite3_step(handle) {
        case SQLITE_ROW:
            return Row(cursor: self)
        case SQLITE_DONE:
            finished = true
            sqlite3_reset(handle)
            return nil
        case let code:
            finished = true
            let error = connection.stepError(code, of: handle, sql: statement.sql, watchStart: watchStart)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Copies of all remaining rows (the rows ``next()`` returns are only
    /// valid until it is called again).
    ///
    /// - throws: the ``DatabaseError`` SQLite reports while stepping.
    public func all() throws -> [Row] {
        var rows: [Row] = []
        while let row = try next() { rows.append(row.copy()) }
        return rows
    }
}
