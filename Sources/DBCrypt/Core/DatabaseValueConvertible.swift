import CSQLCipher
import Foundation

/// A Swift type that can be stored in a column and read back from one.
///
/// DBCrypt makes `Int`, `Int64`, `Int32`, `Double`, `Bool`, `String`, `Data`,
/// `[UInt8]`, `Date`, ``DatabaseValue`` and `Optional`s of them conform. Conform
/// your own types by converting to and from one of those:
///
/// ```swift
/// extension Priority: DatabaseValueConvertible {
///     var databaseValue: DatabaseValue { rawValue.databaseValue }
///     static func fromDatabaseValue(_ v: DatabaseValue) -> Priority? {
///         Int.fromDatabaseValue(v).flatMap(Priority.init(rawValue:))
///     }
/// }
/// ```
public protocol DatabaseValueConvertible {
    /// The value to store.
    ///
    /// - throws: a ``DatabaseError`` when the value cannot be stored (a `Date`
    ///   that is not finite, for example); statements report it as an
    ///   invalid argument, with their SQL.
    var databaseValue: DatabaseValue { get throws }
    /// The Swift value for a stored value, or nil when it does not convert
    /// (NULL into a non-optional type, text into a number, ...).
    static func fromDatabaseValue(_ value: DatabaseValue) -> Self?

    /// The value of `column` in the current row of a SQLite `statement`, or
    /// nil when it does not convert: the path rows read columns through. The
    /// default goes through ``fromDatabaseValue(_:)``; DBCrypt's own types
    /// read straight from the statement, with the same conversions. Called
    /// only by the thread that steps the statement (`sqlite3_column_value`'s
    /// values are unprotected).
    static func fromStatement(_ statement: OpaquePointer, column: Int32) -> Self?

    /// Binds the value to parameter `index` (1-based) of a SQLite `statement`
    /// and returns SQLite's result code: the path `execute(values:)` binds
    /// through. The default binds ``databaseValue``; DBCrypt's own types
    /// bind straight, with the same conversions.
    ///
    /// - throws: what ``databaseValue`` throws.
    func bind(to statement: OpaquePointer, at index: Int32) throws -> Int32
}

extension DatabaseValueConvertible {
    /// Binds ``databaseValue``.
    @inlinable public func bind(to statement: OpaquePointer, at index: Int32) throws -> Int32 {
        try databaseValue.bind(to: statement, at: index)
    }

    /// Reads a ``DatabaseValue`` and converts it with ``fromDatabaseValue(_:)``.
    @inlinable public static func fromStatement(_ statement: OpaquePointer, column: Int32) -> Self? {
        fromDatabaseValue(DatabaseValue(statement: statement, column: column))
    }
}

// MARK: - Integers and reals

extension Int64: DatabaseValueConvertible {
    /// `.integer(self)`.
    @inlinable public var databaseValue: DatabaseValue { .integer(self) }
    /// Binds the integer.
    @inlinable public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        sqlite3_bind_int64(statement, index, self)
    }
    /// An integer, or a real with no fractional part that fits.
    @inlinable public static func fromDatabaseValue(_ value: DatabaseValue) -> Int64? {
        switch value {
        case let .integer(v): return v
        case let .real(d): return Int64(exactly: d)
        default: return nil
        }
    }
    /// An integer, or a real with no fractional part that fits, read
    /// without building a ``DatabaseValue`` (whose text and blob cases the
    /// caller would otherwise carry inlined).
    @inlinable public static func fromStatement(_ statement: OpaquePointer, column: Int32) -> Int64? {
        let value = sqlite3_column_value(statement, column)
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return sqlite3_value_int64(value)
        case SQLITE_FLOAT: return Int64(exactly: sqlite3_value_double(value))
        default: return nil
        }
    }
}

extension Int: DatabaseValueConvertible {
    /// `.integer(Int64(self))`.
    @inlinable public var databaseValue: DatabaseValue { .integer(Int64(self)) }
    /// Binds the integer.
    @inlinable public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        sqlite3_bind_int64(statement, index, Int64(self))
    }
    /// An integer (or integral real) that fits in `Int`.
    @inlinable public static func fromDatabaseValue(_ value: DatabaseValue) -> Int? {
        Int64.fromDatabaseValue(value).flatMap { Int(exactly: $0) }
    }
    /// An integer (or integral real) that fits in `Int`.
    @inlinable public static func fromStatement(_ statement: OpaquePointer, column: Int32) -> Int? {
        Int64.fromStatement(statement, column: column).flatMap { Int(exactly: $0) }
    }
}

extension Int32: DatabaseValueConvertible {
    /// `.integer(Int64(self))`.
    @inlinable public var databaseValue: DatabaseValue { .integer(Int64(self)) }
    /// An integer (or integral real) that fits in `Int32`.
    @inlinable public static func fromDatabaseValue(_ value: DatabaseValue) -> Int32? {
        Int64.fromDatabaseValue(value).flatMap { Int32(exactly: $0) }
    }
}

extension Double: DatabaseValueConvertible {
    /// `.real(self)`.
    @inlinable public var databaseValue: DatabaseValue { .real(self) }
    /// Binds the real.
    @inlinable public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        sqlite3_bind_double(statement, index, self)
    }
    /// A real, or an integer converted to the nearest double.
    @inlinable public static func fromDatabaseValue(_ value: DatabaseValue) -> Double? {
        switch value {
        case let .real(d): return d
        case let .integer(v): return Double(v)
        default: return nil
        }
    }
    /// A real, or an integer converted to the nearest double.
    @inlinable public static func fromStatement(_ statement: OpaquePointer, column: Int32) -> Double? {
        let value = sqlite3_column_value(statement, column)
        switch sqlite3_value_type(value) {
        case SQLITE_FLOAT, SQLITE_INTEGER: return sqlite3_value_double(value)
        default: return nil
        }
    }
}

extension Bool: DatabaseValueConvertible {
    /// `.integer(1)` for true, `.integer(0)` for false, as SQLite does.
    @inlinable public var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }
    /// True for any non-zero number.
    @inlinable public static func fromDatabaseValue(_ value: DatabaseValue) -> Bool? {
        switch value {
        case let .integer(v): return v != 0
        case let .real(d): return d != 0
        default: return nil
        }
    }
}

// MARK: - Text and bytes

extension String: DatabaseValueConvertible {
    /// `.text(self)`.
    @inlinable public var databaseValue: DatabaseValue { .text(self) }
    /// Binds the text, length-counted, without building a ``DatabaseValue``.
    @inlinable public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        DatabaseValue.bindText(self, to: statement, at: index)
    }
    /// Text only: numbers and blobs do not silently become strings.
    @inlinable public static func fromDatabaseValue(_ value: DatabaseValue) -> String? {
        if case let .text(s) = value { return s }
        return nil
    }
    /// Text only, length-counted (NUL characters survive).
    @inlinable public static func fromStatement(_ statement: OpaquePointer, column: Int32) -> String? {
        let value = sqlite3_column_value(statement, column)
        guard sqlite3_value_type(value) == SQLITE_TEXT else { return nil }
        guard let text = sqlite3_value_text(value) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
    }
}

extension Data: DatabaseValueConvertible {
    /// `.blob(self)`.
    @inlinable public var databaseValue: DatabaseValue { .blob(self) }
    /// A blob, or the UTF-8 bytes of text.
    @inlinable public static func fromDatabaseValue(_ value: DatabaseValue) -> Data? {
        switch value {
        case let .blob(d): return d
        case let .text(s): return Data(s.utf8)
        default: return nil
        }
    }
}

extension Array: DatabaseValueConvertible where Element == UInt8 {
    /// `.blob(Data(self))`.
    @inlinable public var databaseValue: DatabaseValue { .blob(Data(self)) }
    /// A blob, or the UTF-8 bytes of text.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> [UInt8]? {
        Data.fromDatabaseValue(value).map { [UInt8]($0) }
    }
}

// MARK: - Dates

extension Date: DatabaseValueConvertible {
    /// Text `YYYY-MM-DD HH:MM:SS.SSS` in UTC, which SQLite's date functions
    /// understand and which sorts in time order for years 0000 to 9999. Other
    /// years are written with more digits or a minus sign (`10000-01-01 ...`,
    /// `-0044-03-15 ...`) and read back, though SQLite's date functions and
    /// text ordering do not know them.
    ///
    /// - throws: ``DatabaseError/invalidArguments(reason:sql:)`` for a date
    ///   that is not finite or lies more than 3 million years from 1970.
    public var databaseValue: DatabaseValue {
        get throws { .text(try SQLDateFormat.string(from: self)) }
    }
    /// Text in SQLite's date formats (`YYYY-MM-DD`, `YYYY-MM-DD HH:MM[:SS[.fraction]]`,
    /// with `T` or a space, then `Z` or an offset `+HH:MM` / `-HH:MM`), or a
    /// number of seconds since 1970. Nil for anything else, never a trap.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Date? {
        switch value {
        case let .text(s): return SQLDateFormat.date(from: s)
        case let .integer(v): return Date(timeIntervalSince1970: TimeInterval(v))
        case let .real(d): return Date(timeIntervalSince1970: d)
        default: return nil
        }
    }
}

// MARK: - Optionals

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    /// `.null` for nil, else the wrapped value's.
    ///
    /// - throws: what the wrapped value's conversion throws.
    @inlinable public var databaseValue: DatabaseValue {
        get throws {
            guard let self else { return .null }
            return try self.databaseValue
        }
    }
    /// Binds NULL for nil, else the wrapped value.
    ///
    /// - throws: what the wrapped value's conversion throws.
    @inlinable public func bind(to statement: OpaquePointer, at index: Int32) throws -> Int32 {
        guard let self else { return sqlite3_bind_null(statement, index) }
        return try self.bind(to: statement, at: index)
    }
    /// `.some(nil)` for NULL, else the wrapped type's conversion.
    @inlinable public static func fromDatabaseValue(_ value: DatabaseValue) -> Wrapped?? {
        if case .null = value { return .some(nil) }
        return Wrapped.fromDatabaseValue(value).map { .some($0) }
    }
    /// `.some(nil)` for NULL, else the wrapped type's conversion.
    @inlinable public static func fromStatement(_ statement: OpaquePointer, column: Int32) -> Wrapped?? {
        if sqlite3_value_type(sqlite3_column_value(statement, column)) == SQLITE_NULL { return .some(nil) }
        return Wrapped.fromStatement(statement, column: column).map { .some($0) }
    }
}
