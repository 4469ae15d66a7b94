import CSQLCipher
import Foundation

/// A record's properties as the coding keys and column values it encoded, in order.
struct EncodedRecord {
    var keys: [String] = []
    var values: [DatabaseValue] = []
    /// The ``PlacedColumnValue``s and their positions; `values` holds NULL
    /// for each until ``resolvePlacedValues(_:userInfo:)``.
    var placed: [(position: Int, value: any PlacedColumnValue)] = []

    /// Encodes `record` through its `Encodable` conformance.
    ///
    /// - throws: ``DatabaseError/recordEncodingFailed(table:column:reason:)``
    ///   for a record that is not a keyed container or a value that cannot be
    ///   stored (naming its column by `naming`), and what the record's own
    ///   `encode(to:)` throws.
    init<R: Encodable>(_ record: R, table: String, naming: ColumnNaming) throws {
        let sink = Sink()
        try Self.encode(record, into: sink, table: table, naming: naming)
        keys = sink.keys
        values = sink.values
        placed = sink.placed
    }

    /// Encodes `record` straight into the parameters of `statement`, reset
    /// beforehand, when it encodes `keys` in that order and no placed value;
    /// returns false, with the parameters partly bound, when it does not.
    ///
    /// - throws: as ``init(_:table:naming:)``, and the error of a value
    ///   SQLite does not bind (too big).
    static func bind<R: Encodable>(
        _ record: R, to statement: Statement, keys: [String], table: String, naming: ColumnNaming, reusing parts: RecordBinding
    ) throws -> Bool {
        // In use: a record's own encode(to:) inserts a record on this connection.
        guard !parts.inUse else { return false }
        parts.inUse = true
        let sink = parts.sink
        sink.startBinding(statement.handle, expecting: keys)
        // Busy meanwhile: such an insert gets a statement of its own from the cache.
        statement.isStepping = true
        defer {
            statement.isStepping = false
            sink.stopBinding()
            parts.inUse = false
        }
        try encode(record, into: sink, containers: parts.containers, table: table, naming: naming)
        if let code = sink.bindingFailure { throw statement.bindingError(code) }
        return !sink.isOtherShape && sink.position == keys.count
    }

    private static func encode<R: Encodable>(
        _ record: R, into sink: Sink, containers: KeyedContainerCache? = nil, table: String, naming: ColumnNaming
    ) throws {
        do {
            try record.encode(to: RecordEncoder(sink: sink, containers: containers))
        } catch let error as DatabaseError {
            throw error
        } catch let error as EncodingError {
            guard case let .invalidValue(_, context) = error else { throw error }
            throw DatabaseError.recordEncodingFailed(
                table: table, column: context.codingPath.first.map { naming.column(for: $0.stringValue) },
                reason: context.debugDescription)
        }
        if let problem = sink.problem {
            throw DatabaseError.recordEncodingFailed(table: table, column: nil, reason: problem)
        }
    }

    /// Whether the value at `position` differs from `before`'s value of the
    /// same key (a placed value compares as the value it holds, when that is
    /// `Equatable`, and otherwise always differs).
    func differs(at position: Int, from before: EncodedRecord) -> Bool {
        guard let old = before.keys.firstIndex(of: keys[position]) else { return true }
        let mine = placed.first { $0.position == position }?.value
        let theirs = before.placed.first { $0.position == old }?.value
        guard let mine, let theirs else { return mine != nil || theirs != nil || values[position] != before.values[old] }
        guard let mine = mine as? any Equatable else { return true }
        return !Self.isEqual(mine, theirs)
    }

    private static func isEqual<Value: Equatable>(_ value: Value, _ other: Any) -> Bool {
        (other as? Value) == value
    }

    /// Stores each placed value in the form its place asks for, now that
    /// the row's key is known.
    ///
    /// - throws: ``DatabaseError/recordEncodingFailed(table:column:reason:)``
    ///   when the record has no primary key value yet, and what a placed
    ///   value throws.
    mutating func resolvePlacedValues(_ sql: RecordSQL, userInfo: [CodingUserInfoKey: any Sendable]) throws {
        guard !placed.isEmpty else { return }
        if sql.primaryKey.isEmpty {
            throw DatabaseError.recordEncodingFailed(
                table: sql.table, column: sql.columns[placed[0].position],
                reason: "its value is bound to its row's primary key, and the type declares none")
        }
        if let rowid = sql.primaryKey.first(where: RecordSQL.isRowid) {
            throw DatabaseError.recordEncodingFailed(
                table: sql.table, column: sql.columns[placed[0].position],
                reason: "its value is bound to its row's primary key, and \(rowid) is no stable key: VACUUM may renumber it; give the table a primary key of its own")
        }
        if let sealedKey = placed.first(where: { sql.primaryKeyPositions.contains($0.position) }) {
            throw DatabaseError.recordEncodingFailed(
                table: sql.table, column: sql.columns[sealedKey.position],
                reason: "it is part of the primary key, which placed (sealed) values are bound to, so it cannot be one itself")
        }
        var rowKey: [DatabaseValue] = []
        for (column, position) in zip(sql.primaryKey, sql.primaryKeyPositions) {
            guard let position, !values[position].isNull else {
                throw DatabaseError.recordEncodingFailed(
                    table: sql.table, column: sql.columns[placed[0].position],
                    reason: "its value is bound to its row's primary key, and the record has no value for \(column) yet: give the record its key before writing it")
            }
            rowKey.append(values[position])
        }
        for (position, value) in placed {
            values[position] = try value.databaseValue(
                at: ColumnPlace(table: sql.table, column: sql.columns[position], rowKey: rowKey, userInfo: userInfo))
        }
        placed = []
    }

    /// Where the encoder puts what it encodes: kept in arrays, or bound to
    /// a statement's parameters as it comes (the insert's fast path).
    final class Sink {
        // Touched by the encoding thread only; no exclusivity check per value.
        @exclusivity(unchecked) var keys: [String] = []
        @exclusivity(unchecked) var values: [DatabaseValue] = []
        @exclusivity(unchecked) var placed: [(position: Int, value: any PlacedColumnValue)] = []
        /// Why the record is not a set of columns, when it is not.
        var problem: String?

        /// The statement bound to, and the keys it expects in order.
        @exclusivity(unchecked) private var statement: OpaquePointer?
        @exclusivity(unchecked) private var expected: [String] = []
        /// How many values were bound.
        @exclusivity(unchecked) private(set) var position = 0
        /// The record encoded another key than expected, or a placed value.
        @exclusivity(unchecked) private(set) var isOtherShape = false
        @exclusivity(unchecked) private(set) var bindingFailure: Int32?

        init() {
            keys.reserveCapacity(16)
            values.reserveCapacity(16)
        }

        /// Binds the values that follow to `statement`, expecting `keys` in order.
        func startBinding(_ statement: OpaquePointer, expecting keys: [String]) {
            self.statement = statement
            expected = keys
            position = 0
            isOtherShape = false
            bindingFailure = nil
            problem = nil
        }

        func stopBinding() {
            statement = nil
            expected = []
        }

        func append(_ key: String, _ value: DatabaseValue) {
            guard let statement else {
                keys.append(key)
                values.append(value)
                return
            }
            guard position < expected.count, expected[position] == key else {
                isOtherShape = true
                return
            }
            position += 1
            let code = value.bind(to: statement, at: Int32(position))
            if code != SQLITE_OK, bindingFailure == nil { bindingFailure = code }
        }

        func append(_ key: String, placed value: any PlacedColumnValue) {
            guard statement == nil else {
                isOtherShape = true
                return
            }
            placed.append((values.count, value))
            append(key, .null)
        }
    }
}

/// Encodes a record's properties as columns: keyed values only (a
/// superclass's properties join its subclass's), column values as they are,
/// anything else as ``ColumnEncoder`` stores it.
private struct RecordEncoder: Encoder {
    let sink: EncodedRecord.Sink
    /// Where the keyed container is kept from record to record, if it is.
    var containers: KeyedContainerCache?
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if let containers, containers.keyType == ObjectIdentifier(Key.self), let cached = containers.container {
            return unsafeDowncast(cached, to: CachedEncodingContainer<Key>.self).container
        }
        let container = KeyedEncodingContainer(RecordKeyedContainer<Key>(sink: sink))
        if let containers {
            containers.container = CachedEncodingContainer(container)
            containers.keyType = ObjectIdentifier(Key.self)
        }
        return container
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        sink.problem = "it encodes as a list, not as properties"
        return DiscardingContainer<AnyCodingKey>()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        sink.problem = "it encodes as a single value, not as properties"
        return DiscardingContainer<AnyCodingKey>()
    }
}

private struct RecordKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let sink: EncodedRecord.Sink
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) { sink.append(key.stringValue, .null) }
    mutating func encode(_ value: Bool, forKey key: Key) { sink.append(key.stringValue, .integer(value ? 1 : 0)) }
    mutating func encode(_ value: String, forKey key: Key) { sink.append(key.stringValue, .text(value)) }
    mutating func encode(_ value: Double, forKey key: Key) { sink.append(key.stringValue, .real(value)) }
    mutating func encode(_ value: Float, forKey key: Key) { sink.append(key.stringValue, .real(Double(value))) }
    mutating func encode(_ value: Int, forKey key: Key) { sink.append(key.stringValue, .integer(Int64(value))) }
    mutating func encode(_ value: Int8, forKey key: Key) { sink.append(key.stringValue, .integer(Int64(value))) }
    mutating func encode(_ value: Int16, forKey key: Key) { sink.append(key.stringValue, .integer(Int64(value))) }
    mutating func encode(_ value: Int32, forKey key: Key) { sink.append(key.stringValue, .integer(Int64(value))) }
    mutating func encode(_ value: Int64, forKey key: Key) { sink.append(key.stringValue, .integer(value)) }
    mutating func encode(_ value: UInt8, forKey key: Key) { sink.append(key.stringValue, .integer(Int64(value))) }
    mutating func encode(_ value: UInt16, forKey key: Key) { sink.append(key.stringValue, .integer(Int64(value))) }
    mutating func encode(_ value: UInt32, forKey key: Key) { sink.append(key.stringValue, .integer(Int64(value))) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { sink.append(key.stringValue, try ColumnEncoder.integer(value, key)) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { sink.append(key.stringValue, try ColumnEncoder.integer(value, key)) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        if let placed = value as? any PlacedColumnValue {
            sink.append(key.stringValue, placed: placed)
        } else {
            sink.append(key.stringValue, try ColumnEncoder.databaseValue(value, key: key))
        }
    }

    // A nil optional is a NULL column, not a missing one: an update writes
    // every column, and a missing one would keep its old value.
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) { value.map { encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) { value.map { encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) { value.map { encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) { value.map { encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) { value.map { encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) { value.map { encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) { value.map { encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) { value.map { encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) { value.map { encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) { value.map { encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) { value.map { encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) { value.map { encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey> {
        sink.problem = "its encode(to:) writes a nested container for \(key.stringValue); encode a nested value instead, which is stored as JSON"
        return KeyedEncodingContainer(DiscardingContainer<NestedKey>())
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        sink.problem = "its encode(to:) writes a nested container for \(key.stringValue); encode a nested value instead, which is stored as JSON"
        return DiscardingContainer<AnyCodingKey>()
    }

    // A superclass's properties are columns of the same row, as
    // `RowDecoder.superDecoder()` reads them.
    mutating func superEncoder() -> any Encoder { RecordEncoder(sink: sink) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { RecordEncoder(sink: sink) }
}

/// A connection's parts for binding records as they are encoded, reused
/// record after record: a new sink and keyed container per record cost
/// two allocations and the runtime's look-ups of their generic types.
final class RecordBinding {
    let sink = EncodedRecord.Sink()
    let containers = KeyedContainerCache()
    var inUse = false
}

private final class CachedEncodingContainer<Key: CodingKey> {
    let container: KeyedEncodingContainer<Key>
    init(_ container: KeyedEncodingContainer<Key>) { self.container = container }
}

/// The JSON of nested values in columns: keys sorted (equal values are
/// equal text), dates in the library's date text.
enum ColumnJSON {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(try SQLDateFormat.string(from: date))
        }
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = SQLDateFormat.date(from: text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a date: the text is not in SQLite's date format")
            }
            return date
        }
        return decoder
    }()
}

/// A coding key for containers that need one and use none.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// The keyed container the records of one type share, kept per connection.
final class KeyedContainerCache {
    @exclusivity(unchecked) var container: AnyObject?
    /// The `CodingKey` type of `container`.
    @exclusivity(unchecked) var keyType: ObjectIdentifier?
}
