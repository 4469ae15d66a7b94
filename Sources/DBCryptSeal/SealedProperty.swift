import DBCrypt
import DBCryptCore
import Foundation

/// A record property stored sealed: AES-256-GCM under the database's
/// ``DBCrypt/Database/Options/sealingKeys``, bound to its table, its column
/// and its row's primary key, so that a sealed value copied into another
/// row, column or table does not open. The file, any SQL, and anyone who
/// has the database key see only the sealed bytes; the app sees the value.
///
/// ```swift
/// struct Account: Record {
///     var id: UUID
///     var name: String
///     @Sealed var token: String
/// }
/// var options = Database.Options()
/// options.sealingKeys = try SealingKeySet(current: SealingKey(hex: hexKeyFromTheKeychain))
/// ```
///
/// Stored as a BLOB in DBCryptSeal's sealed format (version, key id, nonce,
/// ciphertext, tag): a `String` sealed as its UTF-8 bytes, `Data` as it is,
/// any other value as JSON; a nil optional as NULL. Because the row's
/// primary key is part of what a value is bound to, a record with a sealed
/// property needs its key before it is written: an `INTEGER PRIMARY KEY`
/// left for SQLite to choose is an error at insert (give such records a
/// UUID, or a key of your own), and so is the hidden rowid, which VACUUM
/// may renumber. A record's primary key cannot itself be sealed. The key
/// is bound as the record holds it: keep keys in the form the table stores
/// them (not "007" in an INTEGER column, nor "ADA" for a `COLLATE NOCASE`
/// row stored as "ada"), or the value will not open.
///
/// Authenticity, not presence: someone who can write the file cannot forge
/// or move a sealed value, but can delete its row, restore an older sealed
/// copy of the same place, or set an optional one to NULL (read as nil).
///
/// Outside a record (a JSON encoder, a plain `Decodable` fetch of a type
/// that is not a ``DBCrypt/Record``) a sealed property does not encode or
/// decode: it has no place to be bound to.
@propertyWrapper
public struct Sealed<Value: Codable>: Codable, PlacedColumnValue, CustomStringConvertible {
    /// The value, in the clear.
    public var wrappedValue: Value

    /// A sealed property holding `wrappedValue`.
    public init(wrappedValue: Value) {
        self.wrappedValue = wrappedValue
    }

    /// The value sealed under the current key of the database's
    /// ``DBCrypt/Database/Options/sealingKeys``, bound to `place`; NULL for nil.
    ///
    /// - throws: ``SealError/invalidKey(reason:)`` when the database has no
    ///   sealing keys, ``SealError/coding(reason:)`` for a value that does
    ///   not encode, ``SealError/systemFailure(reason:)``.
    public func databaseValue(at place: ColumnPlace) throws -> DatabaseValue {
        guard let plaintext = try SealedColumn.plaintext(of: wrappedValue) else { return .null }
        return .blob(try SealedColumn.keys(place).seal(plaintext, context: SealedColumn.context(place)))
    }

    /// The value sealed at `place`, opened with the database's sealing keys.
    ///
    /// - throws: ``SealError/authenticationFailed`` for a value altered or
    ///   sealed for another place (another row, column or table),
    ///   ``SealError/wrongKey(sealedWith:given:)`` when no key of the
    ///   keyring sealed it, ``SealError/notSealed`` for a column that holds
    ///   something else (NULL where `Value` is not optional),
    ///   ``SealError/coding(reason:)`` when the opened bytes are not a `Value`,
    ///   and ``SealError/invalidKey(reason:)`` when the database has no sealing keys.
    public init(databaseValue: DatabaseValue, at place: ColumnPlace) throws {
        switch databaseValue {
        case .null:
            guard let optional = Value.self as? any SealableOptional.Type else { throw SealError.notSealed }
            wrappedValue = optional.none as! Value
        case let .blob(sealed):
            let plaintext = try SealedColumn.keys(place).open(sealed, context: SealedColumn.context(place))
            wrappedValue = try SealedColumn.value(Value.self, from: plaintext) as! Value
        default:
            throw SealError.notSealed
        }
    }

    /// Refused: a sealed property is stored only as a record's column.
    ///
    /// - throws: `EncodingError.invalidValue`, always.
    public func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(Value.self, .init(
            codingPath: encoder.codingPath, debugDescription: "a sealed property is stored only as a column of a Record, bound to its row"))
    }

    /// Refused: a sealed property is read only from a record's column.
    ///
    /// - throws: `DecodingError.typeMismatch`, always.
    public init(from decoder: any Decoder) throws {
        throw DecodingError.typeMismatch(Self.self, .init(
            codingPath: decoder.codingPath, debugDescription: "a sealed property is read only from a column of a Record, bound to its row"))
    }

    /// `Sealed(<redacted>)`: printing a record does not print its sealed values.
    public var description: String { "Sealed(<redacted>)" }
}

extension Sealed: Equatable where Value: Equatable {}
extension Sealed: Hashable where Value: Hashable {}
extension Sealed: Sendable where Value: Sendable {}

extension CodingUserInfoKey {
    /// Where ``Sealed`` properties find their keys in a database's
    /// ``DBCrypt/Database/Options/userInfo``: a ``SealingKeySet`` or a ``SealingKey``.
    public static let sealingKeys = CodingUserInfoKey(rawValue: "DBCryptSeal.sealingKeys")!
}

extension Database.Options {
    /// The keys of the ``Sealed`` properties of records on this database:
    /// values are sealed with the keyring's current key, and open with
    /// whichever of its keys sealed them (keep an old key in the ring until
    /// the rows it sealed are written again).
    public var sealingKeys: SealingKeySet? {
        get { SealedColumn.keyring(in: userInfo) }
        set { userInfo[.sealingKeys] = newValue }
    }
}

/// An `Optional` seen through its wrapped type, for ``Sealed`` values.
protocol SealableOptional {
    static var wrappedType: Any.Type { get }
    static var none: Self { get }
    static func wrapping(_ value: Any) -> Self
    var wrapped: Any? { get }
}

extension Optional: SealableOptional {
    static var wrappedType: Any.Type { Wrapped.self }
    static func wrapping(_ value: Any) -> Self { .some(value as! Wrapped) }
    var wrapped: Any? { self.map { $0 } }
}

/// How ``Sealed`` properties are sealed: their bytes, their keys, and the
/// context that binds them to their place.
enum SealedColumn {
    /// The bytes sealed for `value`: UTF-8 for a string, a `Data` as it
    /// is, JSON for anything else; nil for a nil optional.
    static func plaintext(of value: Any) throws -> Data? {
        if let optional = value as? any SealableOptional {
            guard let wrapped = optional.wrapped else { return nil }
            return try plaintext(of: wrapped)
        }
        switch value {
        case let text as String: return Data(text.utf8)
        case let data as Data: return data
        case let encodable as any Encodable: return try SealingKey.encode(encodable)
        default: throw SealError.coding(reason: "\(type(of: value)) is not Encodable")
        }
    }

    /// The value of `type` whose bytes are `plaintext`.
    static func value(_ type: Any.Type, from plaintext: Data) throws -> Any {
        if let optional = type as? any SealableOptional.Type {
            return optional.wrapping(try value(optional.wrappedType, from: plaintext))
        }
        if type == String.self {
            guard let text = String(data: plaintext, encoding: .utf8) else { throw SealError.notUTF8 }
            return text
        }
        if type == Data.self { return plaintext }
        guard let decodable = type as? any Decodable.Type else { throw SealError.coding(reason: "\(type) is not Decodable") }
        return try SealingKey.decode(decodable, from: plaintext)
    }

    /// The keys the database holds for sealed properties.
    ///
    /// - throws: ``SealError/invalidKey(reason:)`` when it holds none.
    static func keys(_ place: ColumnPlace) throws -> SealingKeySet {
        guard let keyring = keyring(in: place.userInfo) else {
            throw SealError.invalidKey(reason: "the database has no keys for sealed properties: set Database.Options.sealingKeys where it is opened")
        }
        return keyring
    }

    /// The keyring `userInfo` holds under ``Swift/CodingUserInfoKey/sealingKeys``,
    /// as a keyring or one key; nil when it holds neither.
    static func keyring(in userInfo: [CodingUserInfoKey: any Sendable]) -> SealingKeySet? {
        switch userInfo[.sealingKeys] {
        case let keyring as SealingKeySet: keyring
        // One key: a keyring of one cannot hold two keys of the same id, so this does not fail.
        case let key as SealingKey: try? SealingKeySet(current: key)
        default: nil
        }
    }

    /// What a sealed column value is bound to: its table, its column and
    /// its row's key, each part length-prefixed so that no two places
    /// share a context. Key values are compared as text (an integer key
    /// and a text key of the same digits are one place), as a column's
    /// affinity may store a key as either.
    static func context(_ place: ColumnPlace) -> String {
        var context = "DBCryptSeal sealed column"
        func add(_ part: String) { context += "\u{0}\(part.utf8.count):\(part)" }
        add(place.table)
        add(place.column)
        for value in place.rowKey {
            switch value {
            case .null: add("n")
            case let .integer(integer): add("t\(integer)")
            case let .real(real): add(real == real.rounded() && abs(real) < 1e18 ? "t\(Int64(real))" : "t\(real)")
            case let .text(text): add("t" + text)
            case let .blob(bytes): add("b" + Hex.encode(bytes))
            }
        }
        return context
    }
}
