import CSQLCipher
import Foundation

/// A prepared SQL statement, compiled once and run many times.
///
/// ```swift
/// let insert = try db.makeStatement("INSERT INTO point(x, y) VALUES (?, ?)")
/// for (x, y) in points { try insert.execute([x, y]) }
/// ```
///
/// A statement belongs to the connection that prepared it and, like it, is
/// used from one thread at a time.
public final class Statement {
    /// The SQL text, as given and trimmed, except that its string and blob
    /// literals read `'<redacted>'`: they may hold a key (`ATTACH ... KEY
    /// 'secret'`) or private values. Errors quote it.
    public let sql: String
    let connection: Connection
    @usableFromInline let handle: OpaquePointer
    /// Column names and the name-to-index map, computed once per statement.
    private(set) lazy var columns = ColumnLayout(statement: handle, sql: sql)

    /// Whether the statement is an ATTACH, which runs with the connection's
    /// cipher settings (see ``Connection/runAttach(_:)``).
    let isAttach: Bool
    /// Whether the statement is a DETACH, after which the connection stops
    /// holding the detached file (``Connection/forgetDetachedFiles()``).
    let isDetach: Bool
    /// The number of parameters, asked of SQLite once.
    private let parameterCount: Int
    /// When a statement cache last handed the statement out.
    var lastUse: UInt64 = 0
    /// Whether a cursor holds the statement, stepped or not yet: a cache must
    /// not hand it out again (rebinding it would change the cursor's rows).
    var isStepping = false
    /// The tables the statement may write, for observation: set when it was
    /// prepared while the connection's changes were tracked; nil otherwise,
    /// and for a statement that writes nothing.
    let tablesWritten: Set<String>?

    init(connection: Connection, sql: String, handle: OpaquePointer, isAttach: Bool = false, isDetach: Bool = false,
         tablesWritten: Set<String>? = nil) {
        self.connection = connection
        self.tablesWritten = tablesWritten
        self.sql = sql
        self.handle = handle
        self.isAttach = isAttach
        self.isDetach = isDetach
        parameterCount = Int(sqlite3_bind_parameter_count(handle))
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Prepares and hands to `body` each statement of `sql` in turn, preparing
    /// one only after the previous one ran (it may create what the next uses).
    /// `isOnly` tells `body` that the statement is all of `sql`: what follows
    /// it is only whitespace, semicolons and comments.
    static func forEach(
        in sql: String, on connection: Connection, _ body: (Statement, _ isOnly: Bool) throws -> Void
    ) throws {
        let db = try connection.open()
        var utf8 = Array(sql.utf8)
        // SQLite stops at a NUL: refuse the text before any statement runs.
        if let nul = utf8.firstIndex(of: 0) {
            throw DatabaseError.invalidArguments(
                reason: "the SQL text holds a NUL character at byte \(nul), after which SQLite reads nothing", sql: nil)
        }
        utf8.append(0)
        try utf8.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            let end = buffer.count - 1
            let text = UnsafeBufferPointer(rebasing: buffer[0..<end])
            // How a statement is quoted in errors: as written, but for its
            // literals, which may be keys or private values.
            func quote(_ range: Range<Int>) -> (sql: String, keyword: String) {
                let bytes = UnsafeBufferPointer(rebasing: text[range])
                return (SQLText.redactingLiterals(bytes), SQLText.firstKeyword(bytes))
            }
            var offset = 0
            var isFirst = true
            while offset < end {
                guard end - offset <= Int(Int32.max) else {
                    throw DatabaseError.invalidArguments(reason: "the SQL text is longer than SQLite accepts", sql: nil)
                }
                var statementHandle: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                connection.changeTracker?.willPrepare()
                let code = sqlite3_prepare_v2(db, base + offset, Int32(end - offset), &statementHandle, &tail)
                guard code == SQLITE_OK else {
                    // SQLite's tail stops at the error: quote the whole statement.
                    let rest = UnsafeBufferPointer(rebasing: text[offset...])
                    throw DatabaseError.fromConnection(
                        db, code: code, sql: quote(offset..<offset + SQLText.firstStatementLength(rest)).sql)
                }
                let next = tail.map { $0 - base } ?? end
                guard next > offset else { break }   // no progress: nothing more SQLite will read
                defer { offset = next }
                guard let statementHandle else { continue }
                connection.changeTracker?.recordTablesRead(by: statementHandle, on: db)
                let tablesWritten = connection.changeTracker?.takeTablesWritten()
                let isOnly = isFirst && SQLText.isBlank(UnsafeBufferPointer(rebasing: text[next...]))
                isFirst = false
                let (quoted, keyword) = quote(offset..<next)
                try body(Statement(connection: connection, sql: quoted, handle: statementHandle,
                                   isAttach: keyword == "ATTACH", isDetach: keyword == "DETACH", tablesWritten: tablesWritten), isOnly)
            }
        }
    }

    // MARK: - Running

    /// Binds `arguments` and runs the statement to completion, discarding any rows.
    ///
    /// - throws: ``DatabaseError/invalidArguments(reason:sql:)`` when the
    ///   arguments do not match the parameters, or the ``DatabaseError`` SQLite reports.
    public func execute(_ arguments: StatementArguments = StatementArguments()) throws {
        try bind(arguments)
        try executeWithCurrentBindings()
    }

    /// Binds `values` to the statement's `?` parameters in order and runs it
    /// to completion: the fast path for a statement run many times, with no
    /// argument array built per call.
    ///
    /// ```swift
    /// let insert = try db.makeStatement("INSERT INTO point(x, y, label) VALUES (?, ?, ?)")
    /// for p in points { try insert.execute(values: p.x, p.y, p.label) }
    /// ```
    /// - throws: ``DatabaseError/invalidArguments(reason:sql:)`` when the count
    ///   differs from the parameters', or the ``DatabaseError`` SQLite reports.
    @inlinable
    public func execute<each Value: DatabaseValueConvertible>(values: repeat each Value) throws {
        try bind(values: repeat each values)
        // prepareToBind checked that the connection is open.
        try stepBoundStatement()
    }

    /// Resets the statement and binds `values` to its `?` parameters in order.
    @inlinable func bind<each Value: DatabaseValueConvertible>(values: repeat each Value) throws {
        try prepareToBind(count: countValues(repeat each values))
        var index: Int32 = 0
        do {
            for value in repeat each values {
                index += 1
                let code = try value.bind(to: handle, at: index)
                if code != SQLITE_OK { throw bindingError(code) }
            }
        } catch let error as DatabaseError {
            // A value that cannot be stored learns its statement here.
            throw error.inStatement(sql)
        }
    }

    @inlinable func countValues<each Value>(_ values: repeat each Value) -> Int {
        var count = 0
        for _ in repeat each values { count += 1 }
        return count
    }

    /// Resets the statement for new bindings, checking their count.
    @usableFromInline func prepareToBind(count: Int) throws {
        _ = try connection.open()
        sqlite3_reset(handle)
        try checkPositionalCount(count)
    }

    /// Refuses `count` positional values for a statement with another number of parameters.
    private func checkPositionalCount(_ count: Int) throws {
        let expected = parameterCount
        guard count == expected else {
            throw DatabaseError.invalidArguments(
                reason: "the statement has \(expected) parameter(s) and \(count) value(s) were given", sql: sql)
        }
    }

    /// Binds `arguments` and returns a cursor over the rows.
    ///
    /// - throws: ``DatabaseError/invalidArguments(reason:sql:)`` when the
    ///   arguments do not match the parameters.
    public func query(_ arguments: StatementArguments = StatementArguments()) throws -> RowCursor {
        try bind(arguments)
        // An ATTACH returns no rows; it runs here, with its cipher settings.
        return try cursorOverBoundValues()
    }

    /// Binds `values` to the statement's `?` parameters in order and returns
    /// a cursor over the rows, with no argument array built per call (see
    /// ``execute(values:)``).
    ///
    /// ```swift
    /// let title = try db.cachedStatement("SELECT title FROM note WHERE id = ?").query(values: 42).next()?[0] as String?
    /// ```
    /// - throws: ``DatabaseError/invalidArguments(reason:sql:)`` when the count
    ///   differs from the parameters', or a value cannot be bound.
    @inlinable
    public func query<each Value: DatabaseValueConvertible>(values: repeat each Value) throws -> RowCursor {
        try bind(values: repeat each values)
        return try cursorOverBoundValues()
    }

    /// A cursor over the rows, with the values already bound (an ATTACH runs now).
    @usableFromInline func cursorOverBoundValues() throws -> RowCursor {
        guard !isAttach else {
            try executeWithCurrentBindings()
            return RowCursor(statement: self, finished: true)
        }
        return RowCursor(statement: self)
    }

    /// Runs the statement to completion with the values already bound.
    @usableFromInline func executeWithCurrentBindings() throws {
        _ = try connection.open()
        try stepBoundStatement()
    }

    /// Runs the statement to completion on a connection known to be open:
    /// an ATTACH with its cipher settings, anything else as it is.
    @usableFromInline func stepBoundStatement() throws {
        guard !isAttach else { return try connection.runAttach(stepToCompletion) }
        defer { if isDetach { connection.forgetDetachedFiles() } }
        try stepToCompletion()
    }

    /// Steps the statement until it is done, with no other work.
    func stepToCompletion() throws {
        noteWrites()
        let watchStart = connection.upgradeWatchStart(handle)
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW { code = sqlite3_step(handle) }
        guard code == SQLITE_DONE else { throw stepError(code, watchStart: watchStart) }
    }

    /// Advances to the next row: true when there is one, false when done.
    func step() throws -> Bool {
        _ = try connection.open()
        guard !isAttach else {
            try connection.runAttach(stepToCompletion)
            return false
        }
        defer { if isDetach { connection.forgetDetachedFiles() } }
        noteWrites()
        let watchStart = connection.upgradeWatchStart(handle)
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw stepError(code, watchStart: watchStart)
        }
    }

    /// Tells the change tracker that the tables this statement may write change.
    @inline(__always) func noteWrites() {
        if let tablesWritten { connection.changeTracker?.statementRuns(writing: tablesWritten) }
    }

    /// The error for a failed step; resets the statement so it can run again.
    private func stepError(_ code: Int32, watchStart: UInt64?) -> DatabaseError {
        let error = connection.stepError(code, of: handle, sql: sql, watchStart: watchStart)
        sqlite3_reset(handle)
        return error
    }

    // MARK: - Binding

    /// Resets the statement and binds `arguments` to its parameters.
    ///
    /// - throws: ``DatabaseError/invalidArguments(reason:sql:)`` when a
    ///   positional count differs or a named parameter has no value.
    public func bind(_ arguments: StatementArguments) throws {
        _ = try connection.open()
        // No sqlite3_clear_bindings: every parameter is bound below, or the bind throws.
        sqlite3_reset(handle)
        if let error = arguments.conversionError { throw error.inStatement(sql) }
        switch arguments.storage {
        case let .positional(values):
            try checkPositionalCount(values.count)
            for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
        case let .named(values):
            for index in 0..<sqlite3_bind_parameter_count(handle) {
                guard let cName = sqlite3_bind_parameter_name(handle, index + 1) else {
                    throw DatabaseError.invalidArguments(reason: "parameter \(index + 1) has no name", sql: sql)
                }
                let name = StatementArguments.bareName(String(cString: cName))
                guard let value = values[name] else {
                    throw DatabaseError.invalidArguments(reason: "no value for parameter :\(name)", sql: sql)
                }
                try bind(value, at: index + 1)
            }
        }
    }

    /// Binds one value to the parameter at `index` (1-based), copying text and bytes.
    @usableFromInline func bind(_ value: DatabaseValue, at index: Int32) throws {
        let code = value.bind(to: handle, at: index)
        guard code == SQLITE_OK else { throw bindingError(code) }
    }

    /// The error for a failed `sqlite3_bind_*`: SQLite's standard sentence
    /// (a value too big, out of memory), as the connection's message may be older.
    @usableFromInline func bindingError(_ code: Int32) -> DatabaseError {
        .sqlite(code: code, message: String(cString: sqlite3_errstr(code)), sql: sql)
    }

    // MARK: - Reading the current row

    /// The number of columns in each row.
    public var columnCount: Int { columns.names.count }

    /// The names of the result columns, in order.
    public var columnNames: [String] { columns.names }

    /// The value of column `index` (0-based) in the current row.
    func value(at index: Int32) -> DatabaseValue {
        DatabaseValue(statement: handle, column: index)
    }
}

/// A statement's column names and a case-insensitive name-to-index map,
/// shared by every row the statement produces.
@usableFromInline final class ColumnLayout: @unchecked Sendable {
    // Immutable after init, so sharing between copied rows on any thread is safe.
    @usableFromInline let names: [String]
    /// The statement's SQL, for error messages.
    let sql: String?
    private let indexByLowercasedName: [String: Int]

    init(statement: OpaquePointer, sql: String) {
        let count = Int(sqlite3_column_count(statement))
        names = (0..<count).map { String(cString: sqlite3_column_name(statement, Int32($0))) }
        self.sql = sql
        indexByLowercasedName = Self.index(names)
    }

    init(names: [String], sql: String?) {
        self.names = names
        self.sql = sql
        indexByLowercasedName = Self.index(names)
    }

    /// The index of the first column named `name`, ignoring case as SQL does.
    func index(of name: String) -> Int? {
        if let i = indexByLowercasedName[name] { return i }
        return indexByLowercasedName[name.lowercased()]
    }

    private static func index(_ names: [String]) -> [String: Int] {
        var map: [String: Int] = [:]
        for (i, name) in names.enumerated() {
            let key = name.lowercased()
            if map[key] == nil { map[key] = i }
        }
        return map
    }
}
