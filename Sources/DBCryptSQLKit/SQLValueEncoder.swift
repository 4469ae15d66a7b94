#if SQLKit
import DBCrypt
import Foundation
import NIOCore

/// Turns SQLKit's bound values into SQLite values as Fluent's SQLite driver
/// stores them, so that a database Vapor's driver wrote reads the same once
/// encrypted: a `Date` is a REAL of seconds since 1970, a `Bool` 0 or 1, a
/// `UUID` text, `Data` a blob, an enum its raw value, and any other
/// `Codable` value that is not a single value (a struct, an array) JSON text.
public struct SQLValueEncoder: Sendable {
    private let json: UncheckedJSON<JSONEncoder>

    /// An encoder that writes nested values with `json`.
    public init(json: JSONEncoder = JSONEncoder()) {
        self.json = UncheckedJSON(coder: json)
    }

    /// `value` as SQLite stores it.
    ///
    /// - throws: `EncodingError` when `value` does not encode (an integer
    ///   beyond 64 bits, or what its own `encode(to:)` throws).
    public func encode(_ value: any Encodable) throws -> DatabaseValue {
        if let known = try Self.knownValue(value) { return known }
        let encoder = SingleValueEncoder(encoder: self)
        do {
            try value.encode(to: encoder)
            if let single = encoder.value { return single }
        } catch is NotASingleValue {}
        return .text(String(decoding: try json.coder.encode(value), as: UTF8.self))
    }

    /// The value of the types SQLite stores directly, or nil for others.
    private static func knownValue(_ value: any Encodable) throws -> DatabaseValue? {
        switch value {
        case let value as DatabaseValue: return value
        case let value as String: return .text(value)
        case let value as Bool: return .integer(value ? 1 : 0)
        case let value as Double: return .real(value)
        case let value as Float: return .real(Double(value))
        case let value as Date: return .real(value.timeIntervalSince1970)
        case let value as UUID: return .text(value.uuidString)
        case let value as Data: return .blob(value)
        case let value as ByteBuffer: return .blob(Data(value.readableBytesView))
        case let value as any BinaryInteger:
            guard let integer = Int64(exactly: value) else {
                throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "an integer beyond SQLite's 64 bits"))
            }
            return .integer(integer)
        default: return nil
        }
    }

    /// Takes the one value a type encodes as a single value (an enum, a
    /// wrapper); a keyed or unkeyed container means JSON.
    private final class SingleValueEncoder: Encoder, SingleValueEncodingContainer {
        let encoder: SQLValueEncoder
        var value: DatabaseValue?
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        init(encoder: SQLValueEncoder) { self.encoder = encoder }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(NotASingleValue.Keyed<Key>())
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer { NotASingleValue.Unkeyed() }
        func singleValueContainer() -> any SingleValueEncodingContainer { self }

        func encodeNil() { value = .null }
        func encode<T: Encodable>(_ value: T) throws { self.value = try encoder.encode(value) }
        func encode(_ value: Bool) throws { self.value = try encoder.encode(value) }
        func encode(_ value: String) throws { self.value = try encoder.encode(value) }
        func encode(_ value: Double) throws { self.value = try encoder.encode(value) }
        func encode(_ value: Float) throws { self.value = try encoder.encode(value) }
        func encode(_ value: Int) throws { self.value = try encoder.encode(value) }
        func encode(_ value: Int8) throws { self.value = try encoder.encode(value) }
        func encode(_ value: Int16) throws { self.value = try encoder.encode(value) }
        func encode(_ value: Int32) throws { self.value = try encoder.encode(value) }
        func encode(_ value: Int64) throws { self.value = try encoder.encode(value) }
        func encode(_ value: UInt) throws { self.value = try encoder.encode(value) }
        func encode(_ value: UInt8) throws { self.value = try encoder.encode(value) }
        func encode(_ value: UInt16) throws { self.value = try encoder.encode(value) }
        func encode(_ value: UInt32) throws { self.value = try encoder.encode(value) }
        func encode(_ value: UInt64) throws { self.value = try encoder.encode(value) }
    }
}

/// Thrown, and caught, when a value encodes or decodes with a keyed or
/// unkeyed container: it goes to JSON instead.
struct NotASingleValue: Error {
    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        var codingPath: [any CodingKey] { [] }
        mutating func encodeNil(forKey key: Key) throws { throw NotASingleValue() }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { throw NotASingleValue() }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Keyed<NestedKey>())
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { Unkeyed() }
        mutating func superEncoder() -> any Encoder { Failing() }
        mutating func superEncoder(forKey key: Key) -> any Encoder { Failing() }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        var codingPath: [any CodingKey] { [] }
        var count: Int { 0 }
        mutating func encodeNil() throws { throw NotASingleValue() }
        mutating func encode<T: Encodable>(_ value: T) throws { throw NotASingleValue() }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Keyed<NestedKey>())
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { Unkeyed() }
        mutating func superEncoder() -> any Encoder { Failing() }
    }

    /// An encoder whose every container refuses.
    struct Failing: Encoder {
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> { KeyedEncodingContainer(Keyed<Key>()) }
        func unkeyedContainer() -> any UnkeyedEncodingContainer { Unkeyed() }
        func singleValueContainer() -> any SingleValueEncodingContainer { Single() }
    }

    struct Single: SingleValueEncodingContainer {
        var codingPath: [any CodingKey] { [] }
        mutating func encodeNil() throws { throw NotASingleValue() }
        mutating func encode<T: Encodable>(_ value: T) throws { throw NotASingleValue() }
        mutating func encode(_ value: Bool) throws { throw NotASingleValue() }
        mutating func encode(_ value: String) throws { throw NotASingleValue() }
        mutating func encode(_ value: Double) throws { throw NotASingleValue() }
        mutating func encode(_ value: Float) throws { throw NotASingleValue() }
        mutating func encode(_ value: Int) throws { throw NotASingleValue() }
        mutating func encode(_ value: Int8) throws { throw NotASingleValue() }
        mutating func encode(_ value: Int16) throws { throw NotASingleValue() }
        mutating func encode(_ value: Int32) throws { throw NotASingleValue() }
        mutating func encode(_ value: Int64) throws { throw NotASingleValue() }
        mutating func encode(_ value: UInt) throws { throw NotASingleValue() }
        mutating func encode(_ value: UInt8) throws { throw NotASingleValue() }
        mutating func encode(_ value: UInt16) throws { throw NotASingleValue() }
        mutating func encode(_ value: UInt32) throws { throw NotASingleValue() }
        mutating func encode(_ value: UInt64) throws { throw NotASingleValue() }
    }
}

/// A JSON encoder or decoder held by a `Sendable` value: it is configured
/// before it is handed over and only used to encode or decode after.
struct UncheckedJSON<Coder>: @unchecked Sendable {
    let coder: Coder
}
#endif
