import Foundation

/// A value as SQLite stores it: NULL, a 64-bit integer, a double, text or a blob.
///
/// ```swift
/// let value = try db.fetchOne("SELECT x FROM t")?[0]
/// if case .text(let s) = value { print(s) }
/// ```
public enum DatabaseValue: Hashable, Sendable {
    /// SQL NULL.
    case null
    /// An INTEGER.
    case integer(Int64)
    /// A REAL.
    case real(Double)
    /// TEXT, which may contain NUL characters.
    case text(String)
    /// A BLOB, which may be empty.
    case blob(Data)

    /// Whether the value is SQL NULL.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// A short description of the value's storage class, for error messages;
    /// it never includes the value itself, which may be secret.
    package var storageClassName: String {
        switch self {
        case .null: return "NULL"
        case .integer: return "an integer"
        case .real: return "a real"
        case .text: return "text"
        case .blob: return "a blob"
        }
    }
}

extension DatabaseValue: DatabaseValueConvertible {
    /// The value itself.
    public var databaseValue: DatabaseValue { self }

    /// The value itself: every stored value converts to `DatabaseValue`.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> DatabaseValue? { value }
}
