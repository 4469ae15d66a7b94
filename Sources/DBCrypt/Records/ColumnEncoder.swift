import Foundation

/// Turns one property's value into a column value: a
/// ``DatabaseValueConvertible`` value as it converts, a single-value type
/// (a raw-value enum, a wrapper) as the value it encodes, and a nested value
/// (a struct, an array, a dictionary: anything that asks for a container)
/// as JSON text, which ``ColumnDecoder`` reads back.
final class ColumnEncoder: Encoder, SingleValueEncodingContainer {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    private var value: DatabaseValue?
    private var isNested = false

    private init(key: any CodingKey) { codingPath = [key] }

    /// The column value of `value`, the property of `key`.
    ///
    /// - throws: `EncodingError.invalidValue` for a value that cannot be
    ///   stored (a `Date` that is not finite, an integer above `Int64.max`, a
    ///   type that encodes nothing).
    static func databaseValue<T: Encodable>(_ value: T, key: any CodingKey) throws -> DatabaseValue {
        if let convertible = value as? any DatabaseValueConvertible {
            do {
                return try convertible.databaseValue
            } catch let DatabaseError.invalidArguments(reason, _) {
                throw EncodingError.invalidValue(value, .init(codingPath: [key], debugDescription: reason))
            }
        }
        let encoder = ColumnEncoder(key: key)
        try value.encode(to: encoder)
        if encoder.isNested {
            let json = try ColumnJSON.encoder.encode(value)
            return .text(String(decoding: json, as: UTF8.self))
        }
        guard let encoded = encoder.value else {
            throw EncodingError.invalidValue(value, .init(codingPath: [key], debugDescription: "\(T.self) encodes no value"))
        }
        return encoded
    }

    /// `value` as an integer column, or an error when it is above `Int64.max`.
    static func integer<I: BinaryInteger>(_ value: I, _ key: any CodingKey) throws -> DatabaseValue {
        guard let integer = Int64(exactly: value) else {
            throw EncodingError.invalidValue(value, .init(codingPath: [key], debugDescription: "\(value) is above the largest integer SQLite stores"))
        }
        return .integer(integer)
    }

    // MARK: Encoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        isNested = true
        return KeyedEncodingContainer(DiscardingContainer<Key>())
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        isNested = true
        return DiscardingContainer<AnyCodingKey>()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: SingleValueEncodingContainer

    func encodeNil() { value = .null }
    func encode(_ value: Bool) { self.value = .integer(value ? 1 : 0) }
    func encode(_ value: String) { self.value = .text(value) }
    func encode(_ value: Double) { self.value = .real(value) }
    func encode(_ value: Float) { self.value = .real(Double(value)) }
    func encode(_ value: Int) { self.value = .integer(Int64(value)) }
    func encode(_ value: Int8) { self.value = .integer(Int64(value)) }
    func encode(_ value: Int16) { self.value = .integer(Int64(value)) }
    func encode(_ value: Int32) { self.value = .integer(Int64(value)) }
    func encode(_ value: Int64) { self.value = .integer(value) }
    func encode(_ value: UInt8) { self.value = .integer(Int64(value)) }
    func encode(_ value: UInt16) { self.value = .integer(Int64(value)) }
    func encode(_ value: UInt32) { self.value = .integer(Int64(value)) }
    func encode(_ value: UInt) throws { self.value = try Self.integer(value, codingPath[0]) }
    func encode(_ value: UInt64) throws { self.value = try Self.integer(value, codingPath[0]) }
    func encode<T: Encodable>(_ value: T) throws { self.value = try Self.databaseValue(value, key: codingPath[0]) }
}

/// A container that keeps nothing: what an encoder hands out when the value
/// is encoded some other way (as JSON), or not at all (an error is recorded).
struct DiscardingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol, UnkeyedEncodingContainer, SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }

    mutating func encodeNil(forKey key: Key) {}
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey> { KeyedEncodingContainer(DiscardingContainer<NestedKey>()) }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { self }
    mutating func superEncoder() -> any Encoder { DiscardingEncoder() }
    mutating func superEncoder(forKey key: Key) -> any Encoder { DiscardingEncoder() }

    mutating func encodeNil() {}
    mutating func encode<T: Encodable>(_ value: T) {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(DiscardingContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
}

private struct DiscardingEncoder: Encoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(DiscardingContainer<Key>())
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { DiscardingContainer<AnyCodingKey>() }
    func singleValueContainer() -> any SingleValueEncodingContainer { DiscardingContainer<AnyCodingKey>() }
}
