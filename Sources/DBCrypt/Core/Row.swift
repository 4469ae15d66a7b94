import CSQLCipher
import Foundation

/// One row of a query's result.
///
/// Columns are read by index or by name, as a ``DatabaseValue`` or as any
/// ``DatabaseValueConvertible`` type; a name is looked up in a map the
/// statement builds once, so reading a row builds no dictionary.
///
/// ```swift
/// let row = try db.fetchOne("SELECT id, title FROM note")!
/// let id: Int = try row["id"]
/// let title: String? = try row[1]
/// ```
///
/// A row handed out by a ``RowCursor`` reads the cursor's current position:
/// it is valid until the cursor moves. ``copy()`` keeps its values;
/// `fetchAll` and `fetchOne` return copies.
public struct Row {
    // The per-column path is inlinable so that reading a column compiles down
    // to the C calls in the caller's module: no allocation, no dynamic dispatch.

    /// The statement of a live row (nil for a copied row).
    @usableFromInline let handle: OpaquePointer?
    /// A live row's cursor (which keeps the statement from being reset while
    /// the row is read), or a copied row's values.
    @usableFromInline let source: AnyObject

    init(cursor: RowCursor) {
        handle = cursor.handle
        source = cursor
    }

    /// A row holding `values` under `columns`, for tests and for building rows by hand.
    public init(columns: [String], values: [DatabaseValue]) {
        precondition(columns.count == values.count, "a Row needs one value per column")
        handle = nil
        source = CopiedRow(layout: ColumnLayout(names: columns, sql: nil), values: values)
    }

    private init(layout: ColumnLayout, values: [DatabaseValue]) {
        handle = nil
        source = CopiedRow(layout: layout, values: values)
    }

    /// Column names, the name-to-index map, and the SQL.
    @usableFromInline var layout: ColumnLayout {
        handle != nil ? unsafeDowncast(source, to: RowCursor.self).layout : unsafeDowncast(source, to: CopiedRow.self).layout
    }

    /// The number of columns.
    @inlinable public var count: Int {
        handle != nil ? unsafeDowncast(source, to: RowCursor.self).columnCount : unsafeDowncast(source, to: CopiedRow.self).values.count
    }

    /// The column names, in order.
    public var columnNames: [String] { layout.names }

    /// Whether the row has a column named `name` (ignoring case).
    public func hasColumn(_ name: String) -> Bool { layout.index(of: name) != nil }

    var sql: String? { layout.sql }

    /// The value of column `index` (0-based). Traps when out of range, as arrays do.
    @inlinable public subscript(_ index: Int) -> DatabaseValue {
        precondition(index >= 0 && index < count, "column index out of range")
        if let handle { return DatabaseValue(statement: handle, column: Int32(index)) }
        return unsafeDowncast(source, to: CopiedRow.self).values[index]
    }

    /// The value of the first column named `name` (ignoring case).
    ///
    /// - throws: ``DatabaseError/columnNotFound(name:sql:)``.
    public subscript(_ name: String) -> DatabaseValue {
        get throws { self[try index(of: name)] }
    }

    /// The value of column `index` converted to `T`.
    ///
    /// - throws: ``DatabaseError/typeMismatch(column:value:type:sql:)`` when it
    ///   does not convert (NULL into a non-optional type, for example).
    @inlinable public subscript<T: DatabaseValueConvertible>(_ index: Int) -> T {
        @inline(__always) get throws {
            // The fast path, small enough to inline into the caller: a live
            // row, a column in range, a value that converts.
            if handle != nil, let converted: T = Self.liveValue(handle, columnCount: count, at: index) { return converted }
            return try convertedValue(at: index)
        }
    }

    /// Column `index` of the current row of `handle` converted to `T`; nil
    /// for no statement, a column out of range, or a value that does not
    /// convert: the fast path of the typed reads (here and in `Decodable` rows).
    @inlinable static func liveValue<T: DatabaseValueConvertible>(_ handle: OpaquePointer?, columnCount: Int, at index: Int) -> T? {
        guard let handle, UInt(bitPattern: index) < UInt(bitPattern: columnCount) else { return nil }
        return T.fromStatement(handle, column: Int32(truncatingIfNeeded: index))
    }

    /// The slow path of the typed subscript: copied rows, the range check's
    /// trap, and the conversion error.
    @usableFromInline func convertedValue<T: DatabaseValueConvertible>(at index: Int) throws -> T {
        let value = self[index]
        guard let converted = T.fromDatabaseValue(value) else { throw mismatch(value, column: index, type: T.self) }
        return converted
    }

    /// The value of the first column named `name` converted to `T`.
    ///
    /// - throws: ``DatabaseError/columnNotFound(name:sql:)`` or
    ///   ``DatabaseError/typeMismatch(column:value:type:sql:)``.
    public subscript<T: DatabaseValueConvertible>(_ name: String) -> T {
        get throws { try self[try index(of: name)] as T }
    }

    /// A row that keeps this row's values after its cursor moves on.
    public func copy() -> Row {
        guard handle != nil else { return self }
        return Row(layout: layout, values: (0..<count).map { self[$0] })
    }

    func index(of name: String) throws -> Int {
        guard let index = layout.index(of: name) else { throw DatabaseError.columnNotFound(name: name, sql: sql) }
        return index
    }

    @usableFromInline func mismatch(_ value: DatabaseValue, column: Int, type: Any.Type) -> DatabaseError {
        .typeMismatch(column: layout.names[column], value: value.storageClassName, type: String(describing: type), sql: sql)
    }
}

/// The values of a row that outlives its cursor.
@usableFromInline final class CopiedRow {
    let layout: ColumnLayout
    @usableFromInline let values: [DatabaseValue]

    init(layout: ColumnLayout, values: [DatabaseValue]) {
        self.layout = layout
        self.values = values
    }
}

extension Row: CustomStringConvertible {
    /// The column names with their storage classes, never the values, which may be secret.
    public var description: String {
        "[" + (0..<count).map { "\(layout.names[$0]): \(self[$0].storageClassName)" }.joined(separator: ", ") + "]"
    }
}

extension DatabaseValue {
    /// The value of `column` in the current row of `statement`.
    @inlinable init(statement: OpaquePointer, column: Int32) {
        // One sqlite3_column_value, then the cheaper sqlite3_value_* calls: the
        // connection is confined to this thread, so the unprotected value is safe.
        self.init(sqliteValue: sqlite3_column_value(statement, column))
    }

    /// A copy of a SQLite value (a column, or a SQL function's argument).
    @inlinable init(sqliteValue value: OpaquePointer?) {
        switch sqlite3_value_type(value) {
        case SQLITE_NULL:
            self = .null
        case SQLITE_INTEGER:
            self = .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT:
            self = .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            let count = Int(sqlite3_value_bytes(value))
            guard count > 0, let text = sqlite3_value_text(value) else { self = .text(""); return }
            self = .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        default:
            let count = Int(sqlite3_value_bytes(value))
            guard count > 0, let bytes = sqlite3_value_blob(value) else { self = .blob(Data()); return }
            self = .blob(Data(bytes: bytes, count: count))
        }
    }
}
