/// A `Codable` type stored as the rows of one table: each property is a
/// column, and the record inserts, updates, upserts, deletes and fetches
/// itself with no column written out by hand.
///
/// ```swift
/// struct Player: Record {
///     static let databaseTableName = "player"
///     static let databaseColumnNaming = ColumnNaming.snakeCase
///     var id: Int64?          // INTEGER PRIMARY KEY: nil until inserted
///     var displayName: String // the column display_name
///     var score: Int
///     mutating func didInsert(rowID: Int64) { id = rowID }
/// }
///
/// try queue.write { db in
///     var player = Player(id: nil, displayName: "Ada", score: 10)
///     try player.insert(db)                        // player.id is set
///     player.score += 5
///     try player.update(db)
///     let again = try Player.fetchOne(db, key: player.id)
/// }
/// ```
///
/// **Columns.** Properties are columns of the same name, or of their name in
/// snake case (``databaseColumnNaming``); `CodingKeys` rename or leave out
/// properties. Column values are stored as they convert
/// (``DatabaseValueConvertible``: numbers, `Bool`, `String`, `Data`, `Date`
/// in the library's date text, `UUID` as text, `URL`, `Decimal` as text);
/// enums with raw values as their raw value; other nested values (structs,
/// arrays, dictionaries) as JSON text. A nil optional is NULL.
///
/// **Statements** are built once per type and prepared through each
/// connection's statement cache; rows decode with the query's column map
/// learned from its first row.
///
/// Use a record on the `Database` a queue's or a pool's closure is given:
/// its writes join that closure's transaction.
public protocol Record: Codable {
    /// The table of the records. Default: the type's name, converted by
    /// ``databaseColumnNaming`` (`PlayerScore` or `player_score`).
    static var databaseTableName: String { get }
    /// How properties name columns. Default: ``ColumnNaming/asIs``.
    static var databaseColumnNaming: ColumnNaming { get }
    /// The columns of the table's primary key, as the table names them.
    /// Default: `["id"]`. `["rowid"]` stands for the rowid of a table that
    /// has no `INTEGER PRIMARY KEY`; a property named `rowid` holds it.
    static var databasePrimaryKey: [String] { get }
    /// Called after the record was inserted, with the rowid SQLite gave its
    /// row: set an `INTEGER PRIMARY KEY` property from it. Default: nothing.
    /// (A `WITHOUT ROWID` table has no rowid: ignore the value there.)
    mutating func didInsert(rowID: Int64)
}

extension Record {
    /// The type's name, converted by ``databaseColumnNaming``.
    public static var databaseTableName: String { databaseColumnNaming.column(for: String(describing: Self.self)) }
    /// ``ColumnNaming/asIs``.
    public static var databaseColumnNaming: ColumnNaming { .asIs }
    /// `["id"]`.
    public static var databasePrimaryKey: [String] { ["id"] }
    /// Does nothing.
    public mutating func didInsert(rowID: Int64) {}
}
