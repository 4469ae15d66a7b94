import Foundation

/// The function that decodes `T` from each row of a query, its keys naming
/// columns by `naming`, for inlinable callers (see ``RowDecoder/decoder(for:naming:)``).
@usableFromInline func rowDecoder<T: Decodable>(
    for type: T.Type, naming: ColumnNaming = .asIs, userInfo: [CodingUserInfoKey: any Sendable] = [:]
) -> (Row) throws -> T {
    RowDecoder.decoder(for: type, naming: naming, userInfo: userInfo)
}

/// Decodes a `Decodable` value from a row: keyed containers read the column
/// of the same name; a single value reads the first column.
///
/// Built for the per-row path: the common column types have their own
/// `decode` overloads (no dynamic casts), a coding path is only built when an
/// error needs one, and the check for a type that is itself a column value is
/// made once per query, not once per row.
///
/// Every failure is a ``DatabaseError`` with the query's SQL: a missing
/// column is ``DatabaseError/columnNotFound(name:sql:)``, a value of the wrong
/// storage class ``DatabaseError/typeMismatch(column:value:type:sql:)``, and a
/// `DecodingError` thrown by the type's own `init(from:)` becomes
/// ``DatabaseError/decodingFailed(column:type:sql:)``.
struct RowDecoder: Decoder {
    /// The current row, and the column of each key, learned from the query's first row.
    let columns: ColumnsByKey
    /// The keyed container handed out for the query's rows.
    let cache: KeyedContainerCache
    var row: Row { columns.row }
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { columns.context.userInfo }

    /// A function that decodes `T` from a row, chosen once for a query;
    /// `naming` turns each key into its column's name; `userInfo` is the
    /// connection's.
    static func decoder<T: Decodable>(
        for type: T.Type, naming: ColumnNaming = .asIs, userInfo: [CodingUserInfoKey: any Sendable] = [:]
    ) -> (Row) throws -> T {
        if let convertible = T.self as? any DatabaseValueConvertible.Type {
            return { row in try ColumnDecoder(row: row, index: 0, key: nil).convert(convertible) as! T }
        }
        let context = DecodingContext(T.self, naming: naming, userInfo: userInfo)
        let columns = ColumnsByKey(context: context), cache = KeyedContainerCache()
        return { row in
            columns.startRow(row)
            do {
                return try T(from: RowDecoder(columns: columns, cache: cache))
            } catch let error as DecodingError {
                throw Self.databaseError(error, row: row, type: T.self, naming: context.naming)
            }
        }
    }

    /// The ``DatabaseError`` for a `DecodingError` thrown while decoding `type` from `row`.
    static func databaseError(_ error: DecodingError, row: Row, type: Any.Type, naming: ColumnNaming) -> DatabaseError {
        let context: DecodingError.Context
        switch error {
        case let .keyNotFound(key, _):
            return .columnNotFound(name: naming.column(for: key.stringValue), sql: row.sql)
        case let .typeMismatch(_, c), let .valueNotFound(_, c), let .dataCorrupted(c):
            context = c
        @unknown default:
            return .decodingFailed(column: nil, type: String(describing: type), sql: row.sql)
        }
        return .decodingFailed(column: context.codingPath.first.map { naming.column(for: $0.stringValue) },
                               type: String(describing: type), sql: row.sql)
    }

    static func decode<T: Decodable>(
        _ type: T.Type, from row: Row, naming: ColumnNaming = .asIs, userInfo: [CodingUserInfoKey: any Sendable] = [:]
    ) throws -> T {
        try decoder(for: type, naming: naming, userInfo: userInfo)(row)
    }

    /// The same container for every row of the query (it reads the row
    /// `columns` holds now): a new one per row cost an allocation and the
    /// runtime's look-ups of its generic types, about a third of a row's decoding.
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if cache.keyType == ObjectIdentifier(Key.self), let cached = cache.container {
            return unsafeDowncast(cached, to: CachedKeyedContainer<Key>.self).container
        }
        let container = KeyedDecodingContainer(KeyedRowContainer<Key>(columns: columns))
        cache.container = CachedKeyedContainer(container)
        cache.keyType = ObjectIdentifier(Key.self)
        return container
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(
            codingPath: [], debugDescription: "a row decodes as a keyed container or a single value"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        ColumnDecoder(row: row, index: 0, key: nil)
    }
}

/// The keyed container a query's rows share, kept by ``RowDecoder``.
final class KeyedContainerCache {
    @exclusivity(unchecked) var container: AnyObject?
    /// The `CodingKey` type of `container`.
    @exclusivity(unchecked) var keyType: ObjectIdentifier?
}

private final class CachedKeyedContainer<Key: CodingKey> {
    let container: KeyedDecodingContainer<Key>
    init(_ container: KeyedDecodingContainer<Key>) { self.container = container }
}

private struct KeyedRowContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    /// The current row and its columns by key: the container outlives a row.
    let columns: ColumnsByKey
    var row: Row { columns.row }
    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] { row.columnNames.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { columns.index(of: key.stringValue) != nil }

    private func index(_ key: Key) throws -> Int { try columns.existingIndex(of: key.stringValue) }

    private func column(_ key: Key) throws -> ColumnDecoder {
        ColumnDecoder(row: row, index: try index(key), key: key, context: columns.context)
    }

    // The typed reads call ColumnsByKey with the type written out: it is not
    // generic over `Key`, so each read is compiled for its value type, where
    // a helper generic in both would look up the type's metadata per column.
    func decodeNil(forKey key: Key) throws -> Bool { row[try index(key)].isNull }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try columns.value(Bool.self, key.stringValue) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try columns.value(String.self, key.stringValue) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try columns.value(Double.self, key.stringValue) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try columns.value(Int.self, key.stringValue) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try columns.value(Int32.self, key.stringValue) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try columns.value(Int64.self, key.stringValue) }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try columns.optionalValue(Bool.self, key.stringValue) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try columns.optionalValue(String.self, key.stringValue) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try columns.optionalValue(Double.self, key.stringValue) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try columns.optionalValue(Int.self, key.stringValue) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try columns.optionalValue(Int32.self, key.stringValue) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try columns.optionalValue(Int64.self, key.stringValue) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try column(key).decode(type) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let index = columns.index(of: key.stringValue), !row[index].isNull else { return nil }
        return try ColumnDecoder(row: row, index: index, key: key, context: columns.context).decode(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey> {
        throw DecodingError.typeMismatch(type, .init(
            codingPath: [key], debugDescription: "a column holds one value, not a nested container"))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(
            codingPath: [key], debugDescription: "a column holds one value, not a nested container"))
    }

    func superDecoder() throws -> any Decoder {
        let columns = ColumnsByKey(context: columns.context)
        columns.startRow(row)
        return RowDecoder(columns: columns, cache: KeyedContainerCache())
    }

    func superDecoder(forKey key: Key) throws -> any Decoder { try column(key) }
}

/// The column of each coding key in one query's rows. A type decodes its
/// keys in the same order row after row, so the n-th key asked for in a row
/// is looked up by name once, on the first row; later rows only check that
/// the n-th key is the same name (a comparison of short strings, no hashing,
/// no lowercasing) and take the column found then. A key asked for out of
/// that order is looked up by name, as it would be without this.
final class ColumnsByKey {
    /// How keys name columns, and what placed values need.
    let context: DecodingContext
    var naming: ColumnNaming { context.naming }
    init(context: DecodingContext) { self.context = context }

    // Touched by the decoding thread only; no exclusivity check per column.
    /// The keys in the order the first row asked for them, with their
    /// columns (nil for a name the query has no column for).
    @exclusivity(unchecked) private var learned: [(name: String, index: Int?)] = []
    @exclusivity(unchecked) private var position = 0
    /// The row being decoded, and what its typed reads need of it, kept
    /// apart so that reading a column retains nothing.
    @exclusivity(unchecked) private(set) var row: Row!
    @exclusivity(unchecked) private var handle: OpaquePointer?
    @exclusivity(unchecked) private var columnCount = 0

    /// Called before each row: keys are counted from the first again.
    func startRow(_ row: Row) {
        self.row = row
        handle = row.handle
        columnCount = row.count
        position = 0
    }

    /// The column named `name` (ignoring case), or nil when there is none.
    func index(of name: String) -> Int? {
        let current = position
        position = current &+ 1
        if current < learned.count, learned[current].name == name { return learned[current].index }
        let found = row.layout.index(of: naming.column(for: name))
        if current == learned.count { learned.append((name, found)) }
        return found
    }

    /// The column named `name`.
    ///
    /// - throws: ``DatabaseError/columnNotFound(name:sql:)``.
    @inline(__always) func existingIndex(of name: String) throws -> Int {
        guard let index = index(of: name) else { throw DatabaseError.columnNotFound(name: naming.column(for: name), sql: row.sql) }
        return index
    }

    /// Column `name` converted to `T`, read as the typed subscript reads it
    /// (no ``DatabaseValue`` on the way).
    ///
    /// - throws: ``DatabaseError/columnNotFound(name:sql:)``, ``DatabaseError/typeMismatch(column:value:type:sql:)``.
    func value<T: DatabaseValueConvertible>(_ type: T.Type, _ name: String) throws -> T {
        let index = try existingIndex(of: name)
        if let converted: T = Row.liveValue(handle, columnCount: columnCount, at: index) { return converted }
        return try row[index] as T
    }

    /// Column `name` converted to `T`, nil when it is NULL or missing.
    ///
    /// - throws: ``DatabaseError/typeMismatch(column:value:type:sql:)``.
    func optionalValue<T: DatabaseValueConvertible>(_ type: T.Type, _ name: String) throws -> T? {
        guard let index = index(of: name) else { return nil }
        if let converted: T = Row.liveValue(handle, columnCount: columnCount, at: index) { return converted }
        let value = row[index]
        if case .null = value { return nil }
        guard let converted = T.fromDatabaseValue(value) else { throw ColumnDecoder.mismatch(type, value, row, index, nil) }
        return converted
    }
}

/// What ``ColumnDecoder`` throws, inside a `DecodingError`, when a value
/// asks it for a container: the value is nested, and the column holds its JSON.
struct NestedValueInColumn: Error {}

/// Decodes one column: values that are ``DatabaseValueConvertible`` convert
/// directly; other types (raw-value enums, wrappers) decode through this
/// single-value container.
struct ColumnDecoder: Decoder, SingleValueDecodingContainer {
    let row: Row
    let index: Int
    let key: (any CodingKey)?
    /// The query's record type and connection (nil: a single column value).
    var context: DecodingContext?
    var codingPath: [any CodingKey] { key.map { [$0] } ?? [] }
    var userInfo: [CodingUserInfoKey: Any] {
        guard let context else { return [:] }
        return context.userInfo
    }

    static func mismatch(_ type: Any.Type, _ value: DatabaseValue, _ row: Row, _ index: Int, _ key: (any CodingKey)?) -> DatabaseError {
        .typeMismatch(column: row.columnNames[index], value: value.storageClassName, type: String(describing: type), sql: row.sql)
    }

    // A value that asks for a container is a nested value, which a column
    // holds as JSON text: `decode(_:)` catches these and decodes the JSON.
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw DecodingError.typeMismatch(type, .init(
            codingPath: codingPath, debugDescription: "a column holds one value, not a keyed container",
            underlyingError: NestedValueInColumn()))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(
            codingPath: codingPath, debugDescription: "a column holds one value, not an unkeyed container",
            underlyingError: NestedValueInColumn()))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { row[index].isNull }

    func convert(_ type: any DatabaseValueConvertible.Type) throws -> Any {
        let value = row[index]
        guard let converted = type.fromDatabaseValue(value) else { throw Self.mismatch(type, value, row, index, key) }
        return converted
    }

    private func value<T: DatabaseValueConvertible>(_ type: T.Type) throws -> T {
        let value = row[index]
        guard let converted = T.fromDatabaseValue(value) else { throw Self.mismatch(type, value, row, index, key) }
        return converted
    }

    func decode(_ type: Bool.Type) throws -> Bool { try value(type) }
    func decode(_ type: String.Type) throws -> String { try value(type) }
    func decode(_ type: Double.Type) throws -> Double { try value(type) }
    func decode(_ type: Int.Type) throws -> Int { try value(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try value(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try value(type) }

    /// A column value, a single-value type (a raw-value enum, a wrapper),
    /// or a nested value (a struct, an array, a dictionary) read from the
    /// JSON text that ``ColumnEncoder`` writes for it.
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let convertible = T.self as? any DatabaseValueConvertible.Type {
            return try convert(convertible) as! T
        }
        if let placed = T.self as? any PlacedColumnValue.Type {
            return try placed.init(databaseValue: row[index], at: try place(of: T.self)) as! T
        }
        do {
            return try T(from: self)
        } catch let DecodingError.typeMismatch(_, context) where context.underlyingError is NestedValueInColumn {
            return try decodeJSON(type)
        }
    }

    /// Where this column's value is stored: its table, column and row key.
    ///
    /// - throws: ``DatabaseError/decodingFailed(column:type:sql:)`` when the
    ///   type decoded is not a ``Record`` (it names no table), and
    ///   ``DatabaseError/columnNotFound(name:sql:)`` when the query did not
    ///   select a primary key column.
    private func place(of type: Any.Type) throws -> ColumnPlace {
        // The column as the record's encoder names it (the query may spell it otherwise).
        let column = key.map { context?.naming.column(for: $0.stringValue) ?? $0.stringValue } ?? row.columnNames[index]
        guard let context, let table = context.table else {
            throw DatabaseError.decodingFailed(
                column: column, type: "\(type) (bound to its table and row, it decodes only in a Record type)", sql: row.sql)
        }
        let rowKey = try context.primaryKey.map { keyColumn in
            guard let keyIndex = row.layout.index(of: keyColumn) else { throw DatabaseError.columnNotFound(name: keyColumn, sql: row.sql) }
            return row[keyIndex]
        }
        return ColumnPlace(table: table, column: column, rowKey: rowKey, userInfo: context.userInfo)
    }

    private func decodeJSON<T: Decodable>(_ type: T.Type) throws -> T {
        let value = row[index]
        let json: Data
        switch value {
        case let .text(text): json = Data(text.utf8)
        case let .blob(data): json = data
        default: throw Self.mismatch(type, value, row, index, key)
        }
        do {
            return try ColumnJSON.decoder.decode(type, from: json)
        } catch {
            throw DatabaseError.decodingFailed(column: row.columnNames[index], type: String(describing: type), sql: row.sql)
        }
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }
    func decode(_ type: Int8.Type) throws -> Int8 { try exact(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try exact(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try exact(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try exact(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try exact(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try exact(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try exact(type) }

    private func exact<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        guard let value = I(exactly: try decode(Int64.self)) else {
            throw Self.mismatch(type, row[index], row, index, key)
        }
        return value
    }
}

/// What one query's decoding needs besides its rows: how keys name
/// columns, and for ``PlacedColumnValue``s the record type's table and
/// primary key and the connection's `userInfo`.
struct DecodingContext {
    let naming: ColumnNaming
    /// The table and primary key of the type decoded, when it is a ``Record``.
    let table: String?
    let primaryKey: [String]
    let userInfo: [CodingUserInfoKey: any Sendable]

    /// The context of a query decoding `type`: a ``Record`` type names its
    /// columns by its own naming, whatever `naming` says.
    init<T>(_ type: T.Type, naming: ColumnNaming, userInfo: [CodingUserInfoKey: any Sendable]) {
        self.userInfo = userInfo
        if let record = T.self as? any Record.Type {
            self.naming = record.databaseColumnNaming
            table = record.databaseTableName
            primaryKey = record.databasePrimaryKey
        } else {
            self.naming = naming
            table = nil
            primaryKey = []
        }
    }
}
