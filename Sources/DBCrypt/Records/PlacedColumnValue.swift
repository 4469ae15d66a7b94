/// A property stored in a form that depends on where it is stored: its
/// table, its column and its row's primary key. DBCryptSeal's `Sealed`
/// properties are one kind: sealed bound to their place, so that a value
/// copied to another row or column does not open.
///
/// A record's encoder and the row decoder call these in place of the
/// value's `Codable` conformance, once the row's primary key is known: a
/// record with such a property needs its primary key before it is inserted.
public protocol PlacedColumnValue {
    /// The column value to store for this value at `place`.
    ///
    /// - throws: what the conforming type throws; the write is then not made.
    func databaseValue(at place: ColumnPlace) throws -> DatabaseValue

    /// The value stored as `databaseValue` at `place`.
    ///
    /// - throws: what the conforming type throws for a stored value it cannot
    ///   read back (altered, moved, or written under another key).
    init(databaseValue: DatabaseValue, at place: ColumnPlace) throws
}

/// Where a ``PlacedColumnValue`` is stored.
public struct ColumnPlace {
    /// The table, as the record type names it.
    public let table: String
    /// The column, as the record type names it (its coding key through its
    /// ``ColumnNaming``, whatever case the schema spells it in).
    public let column: String
    /// The row's primary-key values, in the order of the record type's
    /// ``Record/databasePrimaryKey``.
    public let rowKey: [DatabaseValue]
    /// The database's ``Database/Options/userInfo``: where a placed value
    /// finds what it needs that is not in the row (a key, for a sealed one).
    public let userInfo: [CodingUserInfoKey: any Sendable]

    /// A place: made by the record encoder and the row decoder, and by
    /// tests of a conforming type.
    public init(table: String, column: String, rowKey: [DatabaseValue], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.table = table
        self.column = column
        self.rowKey = rowKey
        self.userInfo = userInfo
    }
}
