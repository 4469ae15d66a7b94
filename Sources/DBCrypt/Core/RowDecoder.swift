/// Decodes a `Decodable` value from a row: keyed containers read the column
/// of the same name; a single value reads the first column.
struct RowDecoder: Decoder {
    let row: Row
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    static func decode<T: Decodable>(_ type: T.Type, from row: Row) throws -> T {
        if let convertible = T.self as? any DatabaseValueConvertible.Type {
            return try ColumnDecoder(row: row, index: 0, codingPath: []).decodeConvertible(convertible) as! T
        }
        return try T(from: RowDecoder(row: row))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(KeyedRowContainer<Key>(row: row, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(
            codingPath: codingPath, debugDescription: "a row decodes as a keyed container or a single value"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        ColumnDecoder(row: row, index: 0, codingPath: codingPath)
    }
}

private struct KeyedRowContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let row: Row
    var codingPath: [any CodingKey]

    var allKeys: [Key] { row.columnNames.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { row.hasColumn(key.stringValue) }

    private func column(_ key: Key) throws -> ColumnDecoder {
        guard let index = try? row.index(of: key.stringValue) else {
            throw DecodingError.keyNotFound(key, .init(
                codingPath: codingPath, debugDescription: "the row has no column named \(key.stringValue)"))
        }
        return ColumnDecoder(row: row, index: index, codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool { try column(key).decodeNil() }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try column(key).decode(type) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try decode(type, forKey: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey> {
        throw DecodingError.typeMismatch(type, .init(
            codingPath: codingPath + [key], debugDescription: "a column holds one value, not a nested container"))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(
            codingPath: codingPath + [key], debugDescription: "a column holds one value, not a nested container"))
    }

    func superDecoder() throws -> any Decoder { RowDecoder(row: row, codingPath: codingPath) }

    func superDecoder(forKey key: Key) throws -> any Decoder { try column(key) }
}

/// Decodes one column: values that are ``DatabaseValueConvertible`` convert
/// directly; other types (raw-value enums, wrappers) decode through this
/// single-value container.
private struct ColumnDecoder: Decoder, SingleValueDecodingContainer {
    let row: Row
    let index: Int
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw DecodingError.typeMismatch(type, .init(
            codingPath: codingPath, debugDescription: "a column holds one value, not a keyed container"))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(
            codingPath: codingPath, debugDescription: "a column holds one value, not an unkeyed container"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { row[index].isNull }

    func decodeConvertible(_ type: any DatabaseValueConvertible.Type) throws -> Any {
        let value = row[index]
        guard let converted = type.fromDatabaseValue(value) else {
            throw DecodingError.typeMismatch(type, .init(
                codingPath: codingPath,
                debugDescription: "column \(row.columnNames[index]) holds \(value.storageClassName), not \(type)"))
        }
        return converted
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let convertible = T.self as? any DatabaseValueConvertible.Type {
            return try decodeConvertible(convertible) as! T
        }
        return try T(from: self)
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
            throw DecodingError.typeMismatch(type, .init(
                codingPath: codingPath, debugDescription: "column \(row.columnNames[index]) does not fit in \(type)"))
        }
        return value
    }
}
