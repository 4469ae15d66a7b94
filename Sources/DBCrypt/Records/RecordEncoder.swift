import Foundation

/// A record's properties as the coding keys and column values it encoded, in order.
struct EncodedRecord {
    var keys: [String] = []
    var values: [DatabaseValue] = []

    /// Encodes `record` through its `Encodable` conformance.
    ///
    /// - throws: ``DatabaseError/recordEncodingFailed(table:column:reason:)``
    ///   for a record that is not a keyed container or a value that cannot be
    ///   stored (naming its column by `naming`), and what the record's own
    ///   `encode(to:)` throws.
    init<R: Encodable>(_ record: R, table: String, naming: ColumnNaming) throws {
        let sink = Sink()
        do {
            try record.encode(to: RecordEncoder(sink: sink))
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
        keys = sink.keys
        values = sink.values
    }

    /// The value encoded for `key`, or nil when there is none.
    func value(forKey key: String) -> DatabaseValue? {
        keys.firstIndex(of: key).map { values[$0] }
    }

    /// Where the encoder puts what it encodes.
    final class Sink {
        var keys: [String] = []
        var values: [DatabaseValue] = []
        /// Why the record is not a set of columns, when it is not.
        var problem: String?

        init() {
            keys.reserveCapacity(16)
            values.reserveCapacity(16)
        }

        func append(_ key: String, _ value: DatabaseValue) {
            keys.append(key)
            values.append(value)
        }
    }
}

/// Encodes a record's properties as columns: keyed values only (a
/// superclass's properties join its subclass's), column values as they are,
/// anything else as ``ColumnEncoder`` stores it.
private struct RecordEncoder: Encoder {
    let sink: EncodedRecord.Sink
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RecordKeyedContainer<Key>(sink: sink))
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
        sink.append(key.stringValue, try ColumnEncoder.databaseValue(value, key: key))
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
