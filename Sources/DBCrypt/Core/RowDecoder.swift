import Foundation
import Synchronization

/// The function that decodes `T` from each row of a query, its keys naming
/// columns by `naming`, for inlinable callers (see ``RowDecoder/decoder(for:naming:userInfo:)``).
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
    /// What the query's rows share: the current row, the column of each
    /// key, and the keyed containers handed out.
    let query: QueryDecoding
    var columns: ColumnsByKey { query.columns }
    var row: Row { columns.row! }
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
        let query = QueryDecoding(context)
        return { row in
            query.columns.startRow(row)
            do {
                return try T(from: RowDecoder(query: query))
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

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        query.container(keyedBy: type)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(
            codingPath: [], debugDescription: "a row decodes as a keyed container or a single value"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        ColumnDecoder(row: row, index: 0, key: nil)
    }
}

/// One query's decoding: its ``ColumnsByKey`` and the keyed containers its
/// rows share, one for each key type (a new container per row cost an
/// allocation and the runtime's look-ups of its generic types, about a
/// third of a row's decoding).
final class QueryDecoding {
    let columns: ColumnsByKey
    /// The container of the key type asked for last (a ``CachedKeyedContainer``), and that type.
    @exclusivity(unchecked) private var lastKeyType: ObjectIdentifier?
    @exclusivity(unchecked) private var last: AnyObject?
    /// Every container made for the query, by key type.
    @exclusivity(unchecked) private var made: [ObjectIdentifier: AnyObject] = [:]

    init(_ context: DecodingContext) { columns = ColumnsByKey.take(context) }

    deinit { columns.giveBack() }

    /// The container of `Key` for the query's rows, made on the first
    /// row; it reads the row `columns` holds now.
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        if lastKeyType == ObjectIdentifier(Key.self), let last {
            return unsafeDowncast(last, to: CachedKeyedContainer<Key>.self).container
        }
        let cached = made[ObjectIdentifier(Key.self)] ?? CachedKeyedContainer(KeyedDecodingContainer(
            KeyedRowContainer<Key>(columnsRef: Unmanaged.passUnretained(columns), generation: columns.generation)))
        made[ObjectIdentifier(Key.self)] = cached
        (last, lastKeyType) = (cached, ObjectIdentifier(Key.self))
        return unsafeDowncast(cached, to: CachedKeyedContainer<Key>.self).container
    }
}

private final class CachedKeyedContainer<Key: CodingKey> {
    let container: KeyedDecodingContainer<Key>
    init(_ container: KeyedDecodingContainer<Key>) { self.container = container }
}

/// A query's keyed container: it refers to the query's ``ColumnsByKey``
/// without retaining it (the standard library copies the container for
/// every value it decodes, and with a retained reference each copy was a
/// retain and a release, a twentieth of the decoding). Columns are never
/// freed (see ``ColumnsByKey/take(_:)``), and a container checks that they
/// still serve its query, so one kept past its query's end (stored by an
/// `init(from:)`, which nothing needs to do) throws instead of reading.
private struct KeyedRowContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let columnsRef: Unmanaged<ColumnsByKey>
    /// The ``ColumnsByKey/generation`` of the query.
    let generation: Int
    var codingPath: [any CodingKey] { [] }

    /// Calls `body` with the query's columns, retaining nothing.
    /// - throws: `DecodingError.dataCorrupted` when the query has ended.
    @inline(__always) private func read<R>(_ key: Key, _ body: (ColumnsByKey) throws -> R) throws -> R {
        try columnsRef._withUnsafeGuaranteedRef { columns in
            guard columns.generation == generation else { throw Self.ended(key) }
            return try body(columns)
        }
    }

    /// ``ColumnsByKey/ended(_:)``, out of the line of the reads.
    @inline(never) private static func ended(_ key: Key) -> DecodingError { ColumnsByKey.ended(key) }

    /// The query's columns and row, while the query lasts.
    private var current: (columns: ColumnsByKey, row: Row)? {
        let columns = columnsRef.takeUnretainedValue()
        guard columns.generation == generation, let row = columns.row else { return nil }
        return (columns, row)
    }

    /// The query's columns and row.
    /// - throws: `DecodingError.dataCorrupted` when the query has ended.
    private func live(_ key: Key) throws -> (columns: ColumnsByKey, row: Row) {
        guard let current else { throw Self.ended(key) }
        return current
    }

    var allKeys: [Key] { current?.row.columnNames.compactMap { Key(stringValue: $0) } ?? [] }

    func contains(_ key: Key) -> Bool { current?.columns.index(of: key) != nil }

    private func column(_ key: Key) throws -> ColumnDecoder {
        let (columns, row) = try live(key)
        return ColumnDecoder(row: row, index: try columns.existingIndex(of: key), key: key, context: columns.context)
    }

    // The typed reads find the column (generic over `Key` only), then read
    // it with the type written out (generic over the value only), so each
    // read is compiled for its value type: a helper generic in both would
    // look up the type's metadata per column.
    func decodeNil(forKey key: Key) throws -> Bool {
        let (columns, row) = try live(key)
        return row[try columns.existingIndex(of: key)].isNull
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try read(key) { try $0.value(Bool.self, at: $0.existingIndex(of: key)) } }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try read(key) { try $0.value(String.self, at: $0.existingIndex(of: key)) } }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try read(key) { try $0.value(Double.self, at: $0.existingIndex(of: key)) } }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try read(key) { try $0.value(Int.self, at: $0.existingIndex(of: key)) } }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try read(key) { try $0.value(Int32.self, at: $0.existingIndex(of: key)) } }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try read(key) { try $0.value(Int64.self, at: $0.existingIndex(of: key)) } }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try read(key) { try $0.optionalValue(Bool.self, at: $0.index(of: key)) } }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try read(key) { try $0.optionalValue(String.self, at: $0.index(of: key)) } }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try read(key) { try $0.optionalValue(Double.self, at: $0.index(of: key)) } }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try read(key) { try $0.optionalValue(Int.self, at: $0.index(of: key)) } }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try read(key) { try $0.optionalValue(Int32.self, at: $0.index(of: key)) } }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try read(key) { try $0.optionalValue(Int64.self, at: $0.index(of: key)) } }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try column(key).decode(type) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        let (columns, row) = try live(key)
        guard let index = columns.index(of: key), !row[index].isNull else { return nil }
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
        guard let (columns, row) = current else { throw ColumnsByKey.ended(nil) }
        let query = QueryDecoding(columns.context)
        query.columns.startRow(row)
        return RowDecoder(query: query)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder { try column(key) }
}

/// The column of each coding key in one query's rows. A type decodes its
/// keys in the same order row after row, so the n-th key asked for in a row
/// is looked up by name once, on the first row; later rows only check that
/// the n-th key is the same key and take the column found then. A key of a
/// plain enum (most `CodingKeys`) is checked by its type and its bits, with
/// no call to `stringValue`; any other key by comparing its name. A key
/// asked for out of that order is looked up by name, as it would be without
/// this.
final class ColumnsByKey {
    // One query uses it at a time, on one thread; it passes between
    // queries (and threads) only through `idle`, under its lock.
    // A key's bits stand for its name: `stringValue` must depend on the
    // key's value alone, as every `CodingKey` in practice does.

    /// How keys name columns, and what placed values need.
    @exclusivity(unchecked) private(set) var context: DecodingContext
    var naming: ColumnNaming { context.naming }
    /// Which query it serves: a container made for another generation
    /// belongs to a query that has ended.
    @exclusivity(unchecked) private(set) var generation = 0

    private init(context: DecodingContext) { self.context = context }

    /// Those no query uses now. Containers refer to their columns
    /// unretained, so none is ever freed: a query takes one from here and
    /// gives it back. There are as many as decodings have ever run at once.
    private static let idle = IdleColumns()

    /// Columns for a new query decoding with `context`.
    static func take(_ context: DecodingContext) -> ColumnsByKey {
        guard let columns = idle.pop() else {
            let made = ColumnsByKey(context: context)
            _ = Unmanaged.passRetained(made)  // never freed: see `idle`
            return made
        }
        columns.context = context
        return columns
    }

    /// Ends the query: forgets its row and keys, so that its containers
    /// throw from now on, and makes the columns available to the next.
    func giveBack() {
        generation &+= 1
        (row, handle, columnCount, position) = (nil, nil, 0, 0)
        learned.removeAll(keepingCapacity: true)
        learnedNames.removeAll(keepingCapacity: true)
        context = DecodingContext.idle
        Self.idle.push(self)
    }

    /// What a container kept past its query's end throws.
    static func ended(_ key: (any CodingKey)?) -> DecodingError {
        .dataCorrupted(.init(codingPath: key.map { [$0] } ?? [],
                             debugDescription: "a row's container was used after its query ended: decode the row inside init(from:)"))
    }

    /// A key learned from the first row: its type, its bits when the type
    /// is plain data of at most 8 bytes, and its column (nil for a name the
    /// query has no column for). Plain data itself, so that checking it
    /// retains nothing; the names are kept apart, in `learnedNames`.
    private struct LearnedKey {
        let type: ObjectIdentifier
        let bits: UInt64?
        let index: Int?
    }

    // Touched by the decoding thread only; no exclusivity check per column.
    /// The keys in the order the first row asked for them, and their names.
    @exclusivity(unchecked) private var learned: [LearnedKey] = []
    @exclusivity(unchecked) private var learnedNames: [String] = []
    @exclusivity(unchecked) private var position = 0
    /// The row being decoded, and what its typed reads need of it, kept
    /// apart so that reading a column retains nothing.
    /// Nil once the query has ended (see ``QueryDecoding``).
    @exclusivity(unchecked) private(set) var row: Row?
    @exclusivity(unchecked) private var handle: OpaquePointer?
    @exclusivity(unchecked) private var columnCount = 0

    /// Called before each row: keys are counted from the first again.
    func startRow(_ row: Row) {
        self.row = row
        handle = row.handle
        columnCount = row.count
        position = 0
    }

    /// The bits of `key` when its type is plain data of at most 8 bytes (an
    /// enum without payloads): two such keys of one type with the same bits
    /// are the same key. Nil for other types, which compare names.
    @inline(__always) private static func bits<Key: CodingKey>(of key: Key) -> UInt64? {
        guard _isPOD(Key.self) else { return nil }
        switch MemoryLayout<Key>.size {
        case 0: return 0
        case 1: return UInt64(unsafeBitCast(key, to: UInt8.self))
        case 2: return UInt64(unsafeBitCast(key, to: UInt16.self))
        case 4: return UInt64(unsafeBitCast(key, to: UInt32.self))
        case 8: return unsafeBitCast(key, to: UInt64.self)
        default: return nil
        }
    }

    /// The column of `key` (its name ignoring case), or nil when there is none.
    /// The check of the learned key is inlined into each read; the rest
    /// is not, so that it costs the read nothing.
    @inline(__always) func index<Key: CodingKey>(of key: Key) -> Int? {
        let current = position
        if current < learned.count, let bits = Self.bits(of: key) {
            let known = learned[current]
            if known.bits == bits, known.type == ObjectIdentifier(Key.self) {
                position = current &+ 1
                return known.index
            }
        }
        return index(byName: key, at: current)
    }

    /// The column of `key` when the bits of the key learned at `current`
    /// did not tell: by the learned name, or else found and, when no key
    /// was learned there yet, remembered.
    @inline(never) private func index<Key: CodingKey>(byName key: Key, at current: Int) -> Int? {
        position = current &+ 1
        let name = key.stringValue
        if current < learned.count, learned[current].bits == nil, learnedNames[current] == name { return learned[current].index }
        guard let row else { return nil }
        let found = row.layout.index(of: naming.column(for: name))
        if current == learned.count {
            learned.append(LearnedKey(type: ObjectIdentifier(Key.self), bits: Self.bits(of: key), index: found))
            learnedNames.append(name)
        }
        return found
    }

    /// The column of `key`.
    ///
    /// - throws: ``DatabaseError/columnNotFound(name:sql:)``.
    @inline(__always) func existingIndex<Key: CodingKey>(of key: Key) throws -> Int {
        guard let index = index(of: key) else { throw missing(key) }
        return index
    }

    /// The error for `key`, which the query has no column for.
    @inline(never) private func missing<Key: CodingKey>(_ key: Key) -> any Error {
        guard let row else { return Self.ended(key) }
        return DatabaseError.columnNotFound(name: naming.column(for: key.stringValue), sql: row.sql)
    }

    /// Column `index` converted to `T`, read as the typed subscript reads it
    /// (no ``DatabaseValue`` on the way).
    ///
    /// - throws: ``DatabaseError/typeMismatch(column:value:type:sql:)``.
    func value<T: DatabaseValueConvertible>(_ type: T.Type, at index: Int) throws -> T {
        if let converted: T = Row.liveValue(handle, columnCount: columnCount, at: index) { return converted }
        guard let row else { throw Self.ended(nil) }
        return try row[index] as T
    }

    /// Column `index` converted to `T`; nil when it is NULL, or when `index`
    /// is nil (the query has no such column).
    ///
    /// - throws: ``DatabaseError/typeMismatch(column:value:type:sql:)``.
    func optionalValue<T: DatabaseValueConvertible>(_ type: T.Type, at index: Int?) throws -> T? {
        guard let index else {
            if row == nil { throw Self.ended(nil) }
            return nil
        }
        if let converted: T = Row.liveValue(handle, columnCount: columnCount, at: index) { return converted }
        guard let row else { throw Self.ended(nil) }
        let value = row[index]
        if case .null = value { return nil }
        guard let converted = T.fromDatabaseValue(value) else { throw ColumnDecoder.mismatch(type, value, row, index, nil) }
        return converted
    }
}

/// The ``ColumnsByKey`` no query uses now, under a lock.
private final class IdleColumns: Sendable {
    /// A ``ColumnsByKey`` parked here.
    private struct Parked: @unchecked Sendable {
        // @unchecked: the query that parks one uses it no more, and one
        // query alone takes it back, so no two threads use it at once.
        let columns: ColumnsByKey
    }
    private let columns = Mutex<[Parked]>([])

    func pop() -> ColumnsByKey? {
        columns.withLock { $0.popLast()?.columns }
    }

    func push(_ idle: ColumnsByKey) {
        columns.withLock { $0.append(Parked(columns: idle)) }
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

    /// The context of idle ``ColumnsByKey``, which keeps nothing of the last query.
    static let idle = DecodingContext(Never.self, naming: .asIs, userInfo: [:])
}
