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
    /// The SQL text, as given.
    public let sql: String
    let connection: Connection
    let handle: OpaquePointer
    /// Column names and the name-to-index map, computed once per statement.
    private(set) lazy var columns = ColumnLayout(statement: handle)

    init(connection: Connection, sql: String, handle: OpaquePointer) {
        self.connection = connection
        self.sql = sql
        self.handle = handle
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Prepares and hands to `body` each statement of `sql` in turn, preparing
    /// one only after the previous one ran (it may create what the next uses).
    /// `isOnly` tells `body` that the statement is all of `sql`.
    static func forEach(
        in sql: String, on connection: Connection, _ body: (Statement, _ isOnly: Bool) throws -> Void
    ) throws {
        let db = try connection.open()
        var utf8 = Array(sql.utf8)
        utf8.append(0)
        try utf8.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            let end = buffer.count - 1
            var offset = 0
            var isFirst = true
            while offset < end {
                var statementHandle: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let code = sqlite3_prepare_v2(db, base + offset, Int32(end - offset), &statementHandle, &tail)
                let next = tail.map { $0 - base } ?? end
                let text = String(decoding: UnsafeRawBufferPointer(start: base + offset, count: next - offset), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                guard code == SQLITE_OK else {
                    throw DatabaseError.fromConnection(db, code: code, sql: text)
                }
                offset = next
                guard let statementHandle else { continue }
                let isOnly = isFirst && buffer[next..<end].allSatisfy { $0 == 32 || (9...13).contains($0) || $0 == 59 }
                isFirst = false
                try body(Statement(connection: connection, sql: text, handle: statementHandle), isOnly)
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
        while try step() {}
    }

    /// Binds `arguments` and returns a cursor over the rows.
    ///
    /// - throws: ``DatabaseError/invalidArguments(reason:sql:)`` when the
    ///   arguments do not match the parameters.
    public func query(_ arguments: StatementArguments = StatementArguments()) throws -> RowCursor {
        try bind(arguments)
        return RowCursor(statement: self)
    }

    /// Runs the statement to completion with the values already bound.
    func executeWithCurrentBindings() throws {
        sqlite3_reset(handle)
        while try step() {}
    }

    /// Advances to the next row: true when there is one, false when done.
    func step() throws -> Bool {
        _ = try connection.open()
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code:
            let error = DatabaseError.fromConnection(sqlite3_db_handle(handle), code: code, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    // MARK: - Binding

    /// Resets the statement and binds `arguments` to its parameters.
    ///
    /// - throws: ``DatabaseError/invalidArguments(reason:sql:)`` when a
    ///   positional count differs or a named parameter has no value.
    public func bind(_ arguments: StatementArguments) throws {
        _ = try connection.open()
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        let count = Int(sqlite3_bind_parameter_count(handle))
        switch arguments.storage {
        case let .positional(values):
            guard values.count == count else {
                throw DatabaseError.invalidArguments(
                    reason: "the statement has \(count) parameter(s) and \(values.count) value(s) were given", sql: sql)
            }
            for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
        case let .named(values):
            for index in 0..<Int32(count) {
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
    func bind(_ value: DatabaseValue, at index: Int32) throws {
        let code: Int32
        switch value {
        case .null:
            code = sqlite3_bind_null(handle, index)
        case let .integer(v):
            code = sqlite3_bind_int64(handle, index, v)
        case let .real(d):
            code = sqlite3_bind_double(handle, index, d)
        case var .text(s):
            // Length-counted, so NUL characters inside the text survive. An
            // empty string is bound as "" with a non-null pointer: a null
            // pointer would bind NULL.
            code = s.withUTF8 { utf8 in
                guard let base = utf8.baseAddress, utf8.count > 0 else {
                    return sqlite3_bind_text(handle, index, "", 0, dbcrypt_transient())
                }
                return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                    sqlite3_bind_text(handle, index, $0, Int32(utf8.count), dbcrypt_transient())
                }
            }
        case let .blob(data):
            code = data.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress, bytes.count > 0 else {
                    return sqlite3_bind_zeroblob(handle, index, 0)
                }
                return sqlite3_bind_blob(handle, index, base, Int32(bytes.count), dbcrypt_transient())
            }
        }
        guard code == SQLITE_OK else {
            throw DatabaseError.fromConnection(sqlite3_db_handle(handle), code: code, sql: sql)
        }
    }

    // MARK: - Reading the current row

    /// The number of columns in each row.
    public var columnCount: Int { columns.names.count }

    /// The names of the result columns, in order.
    public var columnNames: [String] { columns.names }

    /// The value of column `index` (0-based) in the current row.
    func value(at index: Int32) -> DatabaseValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_NULL:
            return .null
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(handle, index))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(handle, index))
            guard count > 0, let text = sqlite3_column_text(handle, index) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        default:
            let count = Int(sqlite3_column_bytes(handle, index))
            guard count > 0, let bytes = sqlite3_column_blob(handle, index) else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        }
    }
}

/// A statement's column names and a case-insensitive name-to-index map,
/// shared by every row the statement produces.
final class ColumnLayout: @unchecked Sendable {
    // Immutable after init, so sharing between copied rows on any thread is safe.
    let names: [String]
    private let indexByLowercasedName: [String: Int]

    init(statement: OpaquePointer) {
        let count = Int(sqlite3_column_count(statement))
        names = (0..<count).map { String(cString: sqlite3_column_name(statement, Int32($0))) }
        indexByLowercasedName = Self.index(names)
    }

    init(names: [String]) {
        self.names = names
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
