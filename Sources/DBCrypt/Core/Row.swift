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
    enum Storage {
        /// The cursor's current row. Holding the cursor keeps its statement
        /// from being reset while the row is still read.
        case live(RowCursor)
        case copied([DatabaseValue])
    }

    let storage: Storage
    let layout: ColumnLayout
    let sql: String?

    init(cursor: RowCursor) {
        storage = .live(cursor)
        layout = cursor.statement.columns
        sql = cursor.statement.sql
    }

    /// A row holding `values` under `columns`, for tests and for building rows by hand.
    public init(columns: [String], values: [DatabaseValue]) {
        precondition(columns.count == values.count, "a Row needs one value per column")
        storage = .copied(values)
        layout = ColumnLayout(names: columns)
        sql = nil
    }

    /// The number of columns.
    public var count: Int { layout.names.count }

    /// The column names, in order.
    public var columnNames: [String] { layout.names }

    /// Whether the row has a column named `name` (ignoring case).
    public func hasColumn(_ name: String) -> Bool { layout.index(of: name) != nil }

    /// The value of column `index` (0-based). Traps when out of range, as arrays do.
    public subscript(_ index: Int) -> DatabaseValue {
        precondition(index >= 0 && index < count, "column index \(index) out of range 0..<\(count)")
        switch storage {
        case let .live(cursor): return cursor.statement.value(at: Int32(index))
        case let .copied(values): return values[index]
        }
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
    public subscript<T: DatabaseValueConvertible>(_ index: Int) -> T {
        get throws { try convert(self[index], column: layout.names[index]) }
    }

    /// The value of the first column named `name` converted to `T`.
    ///
    /// - throws: ``DatabaseError/columnNotFound(name:sql:)`` or
    ///   ``DatabaseError/typeMismatch(column:value:type:sql:)``.
    public subscript<T: DatabaseValueConvertible>(_ name: String) -> T {
        get throws { try convert(self[try index(of: name)], column: name) }
    }

    /// A row that keeps this row's values after its cursor moves on.
    public func copy() -> Row {
        guard case .live = storage else { return self }
        return Row(layout: layout, values: (0..<count).map { self[$0] }, sql: sql)
    }

    private init(layout: ColumnLayout, values: [DatabaseValue], sql: String?) {
        storage = .copied(values)
        self.layout = layout
        self.sql = sql
    }

    func index(of name: String) throws -> Int {
        guard let index = layout.index(of: name) else { throw DatabaseError.columnNotFound(name: name, sql: sql) }
        return index
    }

    private func convert<T: DatabaseValueConvertible>(_ value: DatabaseValue, column: String) throws -> T {
        guard let converted = T.fromDatabaseValue(value) else {
            throw DatabaseError.typeMismatch(
                column: column, value: value.storageClassName, type: String(describing: T.self), sql: sql)
        }
        return converted
    }
}

extension Row: CustomStringConvertible {
    /// The column names with their storage classes, never the values, which may be secret.
    public var description: String {
        "[" + (0..<count).map { "\(layout.names[$0]): \(self[$0].storageClassName)" }.joined(separator: ", ") + "]"
    }
}
