/// Where a salvage writes the database it rebuilds: a new, empty SQLite
/// database, through whatever SQLite the caller links (SQLCipherFormat links
/// none). DBCrypt's `Database` is one in a few lines.
public protocol SalvageDestination {
    /// Runs one statement with `arguments` bound to its `?` parameters.
    func execute(_ sql: String, _ arguments: [SalvagedValue]) throws
    /// The rows one query returns, each as its columns' values.
    func rows(_ sql: String) throws -> [[SalvagedValue]]
}

/// A value read from a SQLite record.
public enum SalvagedValue: Sendable, Equatable {
    /// SQL NULL.
    case null
    /// An integer (SQLite stores 1 to 8 bytes, and 0 and 1 in none).
    case integer(Int64)
    /// A 64-bit float.
    case real(Double)
    /// Text, read as UTF-8 (invalid bytes replaced).
    case text(String)
    /// A blob.
    case blob([UInt8])
}
