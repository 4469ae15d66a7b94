#if SQLKit
import DBCrypt
import Foundation

/// Reads SQLite values back as the types Fluent's SQLite driver wrote them
/// from (see ``SQLValueEncoder``): a `Date` from a REAL or INTEGER of
/// seconds since 1970 or ISO 8601 text, a `Bool` from 0 or 1, a `UUID` from
/// text, and other `Codable` values that are not single values from JSON.
public struct SQLValueDecoder: Sendable {
    private let json: UncheckedJSON<JSONDecoder>

    /// A decoder that reads nested values with `json`.
    public init(json: JSONDecoder = JSONDecoder()) {
        self.json = UncheckedJSON(coder: json)
    }

    /// `value` as a `T`.
    ///
    /// - throws: `DecodingError.typeMismatch` when `value` is not a `T`
    ///   (its message names the storage class, never the value, which the
    ///   file encrypts), or what `T`'s own `init(from:)` throws.
    public func decode<T: Decodable>(_ type: T.Type, from value: DatabaseValue) throws -> T {
        if let known = try Self.knownValue(type, from: value) { return known }
        do {
            return try T(from: SingleValueDecoder(decoder: self, value: value))
        } catch is NotASingleValue {
            let bytes: Data
            switch value {
            case .text(let text): bytes = Data(text.utf8)
            case .blob(let blob): bytes = blob
            default: throw mismatch(type, value)
            }
            return try json.coder.decode(T.self, from: bytes)
        }
    }

    /// The value of the types SQLite stores directly, or nil for others.
    private static func knownValue<T>(_ type: T.Type, from value: DatabaseValue) throws -> T? {
        func converted(_ result: Any?) throws -> T {
            guard let result = result as? T else { throw mismatch(type, value) }
            return result
        }
        switch type {
        case is DatabaseValue.Type: return try converted(value)
        case is String.Type:
            if case .text(let text) = value { return try converted(text) }
            throw mismatch(type, value)
        case is Bool.Type:
            switch value {
            case .integer(let n): return try converted(n != 0)
            case .text("true"), .text("1"): return try converted(true)
            case .text("false"), .text("0"): return try converted(false)
            default: throw mismatch(type, value)
            }
        case is Double.Type, is Float.Type:
            let double: Double
            switch value {
            case .integer(let n): double = Double(n)
            case .real(let r): double = r
            default: throw mismatch(type, value)
            }
            return try converted(type is Float.Type ? Float(double) as Any : double)
        case is Date.Type: return try converted(date(from: value))
        case is UUID.Type:
            guard case .text(let text) = value, let uuid = UUID(uuidString: text) else { throw mismatch(type, value) }
            return try converted(uuid)
        case is Data.Type:
            guard case .blob(let blob) = value else { throw mismatch(type, value) }
            return try converted(blob)
        case let integer as any BinaryInteger.Type:
            guard case .integer(let n) = value, let exact = integer.init(exactly: n) else { throw mismatch(type, value) }
            return try converted(exact)
        default:
            return nil
        }
    }

    /// A date from seconds since 1970 (rounded to the microsecond, as
    /// Vapor's driver does, so that a date read back equals the one
    /// written), or from text as SQLite's date functions write it
    /// (`SQLDateFormat`: ISO 8601 with a `T` or a space, a fraction, a zone).
    private static func date(from value: DatabaseValue) throws -> Date {
        let seconds: Double
        switch value {
        case .real(let r): seconds = r
        case .integer(let n): seconds = Double(n)
        case .text(let text):
            // As DBCrypt's records read it, the whole text or nothing (Vapor's
            // driver reads 2024-01-02T03:04:05, without a zone, as midnight).
            guard let date = SQLDateFormat.date(from: text) else { throw mismatch(Date.self, value) }
            return date
        default: throw mismatch(Date.self, value)
        }
        let sinceReference = seconds - Date.timeIntervalBetween1970AndReferenceDate
        return Date(timeIntervalSinceReferenceDate: (sinceReference * 1e6).rounded() / 1e6)
    }

    /// Hands a type that decodes as a single value (an enum, a wrapper,
    /// an optional) the column's value; a keyed or unkeyed container means JSON.
    private struct SingleValueDecoder: Decoder, SingleValueDecodingContainer {
        let decoder: SQLValueDecoder
        let value: DatabaseValue
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> { throw NotASingleValue() }
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw NotASingleValue() }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

        func decodeNil() -> Bool { value.isNull }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decode(type, from: value) }
        func decode(_ type: Bool.Type) throws -> Bool { try decoder.decode(type, from: value) }
        func decode(_ type: String.Type) throws -> String { try decoder.decode(type, from: value) }
        func decode(_ type: Double.Type) throws -> Double { try decoder.decode(type, from: value) }
        func decode(_ type: Float.Type) throws -> Float { try decoder.decode(type, from: value) }
        func decode(_ type: Int.Type) throws -> Int { try decoder.decode(type, from: value) }
        func decode(_ type: Int8.Type) throws -> Int8 { try decoder.decode(type, from: value) }
        func decode(_ type: Int16.Type) throws -> Int16 { try decoder.decode(type, from: value) }
        func decode(_ type: Int32.Type) throws -> Int32 { try decoder.decode(type, from: value) }
        func decode(_ type: Int64.Type) throws -> Int64 { try decoder.decode(type, from: value) }
        func decode(_ type: UInt.Type) throws -> UInt { try decoder.decode(type, from: value) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.decode(type, from: value) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.decode(type, from: value) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.decode(type, from: value) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.decode(type, from: value) }
    }
}

/// A type mismatch that names what was stored, never the value.
private func mismatch<T>(_ type: T.Type, _ value: DatabaseValue) -> DecodingError {
    DecodingError.typeMismatch(type, .init(codingPath: [], debugDescription: "\(value.storageClassName) cannot be read as \(type)"))
}
#endif
