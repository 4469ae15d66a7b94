import CSQLCipher
import Foundation
import Synchronization

/// The SQL of a record type's statements, built once per type (and per list
/// of encoded keys, which a custom `encode(to:)` may vary) and kept for the
/// life of the process; the statements themselves are prepared through each
/// connection's statement cache.
final class RecordSQL: Sendable {
    /// The table, as the type names it, and quoted for SQL.
    let table: String
    let quotedTable: String
    /// The coding keys these statements bind, in order, and their columns.
    let keys: [String]
    let columns: [String]
    /// The primary key's columns, as the type declares them, and where each
    /// is in `keys` (nil when the record does not encode it).
    let primaryKey: [String]
    let primaryKeyPositions: [Int?]
    /// The positions in `keys` of the columns outside the primary key.
    let otherPositions: [Int]
    /// Whether the record encodes a ``PlacedColumnValue``, which needs the
    /// row's key before it is stored (so no binding as it is encoded).
    let hasPlacedValues: Bool

    let insert: String
    /// `INSERT ... ON CONFLICT(primary key) DO UPDATE`, where SQLite has it (3.24+).
    let nativeUpsert: String?
    /// `WHERE` and the primary key's columns.
    let keyCondition: String
    /// `UPDATE` of every column outside the primary key.
    let updateAll: String
    /// `DELETE` and `SELECT 1` of the row with the primary key.
    let delete: String
    let exists: String

    init(
        table: String, keys: [String], naming: ColumnNaming, primaryKey: [String], hasPlacedValues: Bool = false,
        sqliteVersion: Int32 = sqlite3_libversion_number()
    ) {
        self.table = table
        self.keys = keys
        self.hasPlacedValues = hasPlacedValues
        self.primaryKey = primaryKey
        quotedTable = SQLIdentifier.quoted(table)
        columns = keys.map(naming.column(for:))
        let lowercased = columns.map { $0.lowercased() }
        primaryKeyPositions = primaryKey.map { lowercased.firstIndex(of: $0.lowercased()) }
        let keyPositions = Set(primaryKeyPositions.compactMap { $0 })
        otherPositions = columns.indices.filter { !keyPositions.contains($0) }
        let quotedColumns = columns.map(SQLIdentifier.quoted)
        insert = "INSERT INTO \(quotedTable)(\(quotedColumns.joined(separator: ", "))) VALUES (\(Self.placeholders(columns.count)))"
        keyCondition = "WHERE " + primaryKey.map { "\(SQLIdentifier.quoted($0)) = ?" }.joined(separator: " AND ")
        updateAll = Self.update(quotedTable, otherPositions.map { quotedColumns[$0] }, keyCondition)
        delete = "DELETE FROM \(quotedTable) \(keyCondition)"
        exists = "SELECT 1 FROM \(quotedTable) \(keyCondition)"
        if sqliteVersion >= 3_024_000, !primaryKey.isEmpty, primaryKeyPositions.allSatisfy({ $0 != nil }) {
            let updates = otherPositions.map { "\(quotedColumns[$0]) = excluded.\(quotedColumns[$0])" }
            let action = updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + updates.joined(separator: ", ")
            nativeUpsert = insert + " ON CONFLICT(\(primaryKey.map(SQLIdentifier.quoted).joined(separator: ", "))) " + action
        } else {
            nativeUpsert = nil
        }
    }

    /// `UPDATE` of the columns at `positions` in `keys`, found by the primary key.
    func update(_ positions: [Int]) -> String {
        Self.update(quotedTable, positions.map { SQLIdentifier.quoted(columns[$0]) }, keyCondition)
    }

    private static func update(_ table: String, _ quotedColumns: [String], _ condition: String) -> String {
        "UPDATE \(table) SET \(quotedColumns.map { "\($0) = ?" }.joined(separator: ", ")) \(condition)"
    }

    /// The primary key's values in `record`, in the primary key's order.
    ///
    /// - throws: ``DatabaseError/missingPrimaryKey(table:column:sql:)`` when
    ///   a column is not encoded, or is NULL (in `sql`, which needs it).
    func keyValues(_ record: EncodedRecord, for sql: String) throws -> [DatabaseValue] {
        guard !primaryKey.isEmpty else {
            throw DatabaseError.missingPrimaryKey(table: table, column: "(none declared)", sql: sql)
        }
        return try zip(primaryKey, primaryKeyPositions).map { column, position in
            guard let position, !record.values[position].isNull else {
                throw DatabaseError.missingPrimaryKey(table: table, column: column, sql: sql)
            }
            return record.values[position]
        }
    }

    // MARK: Building

    /// Whether `column` names the table's hidden rowid (any of its three names).
    static func isRowid(_ column: String) -> Bool {
        ["rowid", "oid", "_rowid_"].contains(column.lowercased())
    }

    /// `count` comma-separated `?`.
    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }

    // MARK: The cache

    private static let byType = Mutex<[ObjectIdentifier: RecordSQL]>([:])

    /// The statements of `R` for `record`, one of its records encoded.
    static func of<R: Record>(_ type: R.Type, _ record: EncodedRecord) -> RecordSQL {
        let hasPlacedValues = !record.placed.isEmpty
        if let cached = cached(type), cached.keys == record.keys, cached.hasPlacedValues == hasPlacedValues { return cached }
        let built = RecordSQL(
            table: R.databaseTableName, keys: record.keys, naming: R.databaseColumnNaming, primaryKey: R.databasePrimaryKey,
            hasPlacedValues: hasPlacedValues)
        let id = ObjectIdentifier(type)
        byType.withLock { $0[id] = built }
        return built
    }

    /// The statements of `R` for the keys its last record encoded, if one was.
    static func cached<R: Record>(_ type: R.Type) -> RecordSQL? {
        byType.withLock { $0[ObjectIdentifier(type)] }
    }
}

/// The `SELECT` of a record type's rows: every column, and the rowid first
/// when the primary key is the table's rowid.
enum RecordSelection {
    static func of<R: Record>(_ type: R.Type) -> String {
        let key = R.databasePrimaryKey
        let columns = key.count == 1 && RecordSQL.isRowid(key[0]) ? "\(key[0]), *" : "*"
        return "SELECT \(columns) FROM \(SQLIdentifier.quoted(R.databaseTableName))"
    }
}
