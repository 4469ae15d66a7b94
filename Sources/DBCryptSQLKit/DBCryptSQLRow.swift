#if SQLKit
import DBCrypt
import SQLKit

/// One row of a query's result, for SQLKit: its values copied out of the
/// statement, and the statement's column names, shared by its rows.
struct DBCryptSQLRow: SQLRow {
    /// The names of a statement's columns and where each is, built once per query.
    final class Columns: Sendable {
        let names: [String]
        /// The first column of each name (a join may repeat one), as SQLite's own lookup finds it.
        let positions: [String: Int]

        init(_ names: [String]) {
            self.names = names
            var positions: [String: Int] = [:]
            for (index, name) in names.enumerated() where positions[name] == nil { positions[name] = index }
            self.positions = positions
        }
    }

    let columns: Columns
    let values: [DatabaseValue]
    let decoder: SQLValueDecoder

    var allColumns: [String] { columns.names }

    func contains(column: String) -> Bool { columns.positions[column] != nil }

    /// Whether the column is NULL; a missing column counts as NULL, as
    /// SQLKit's SQLite row has it.
    func decodeNil(column: String) throws -> Bool {
        columns.positions[column].map { values[$0].isNull } ?? true
    }

    /// - throws: ``DBCrypt/DatabaseError/columnNotFound(name:sql:)``, or a
    ///   `DecodingError` from ``SQLValueDecoder``.
    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard let position = columns.positions[column] else { throw DatabaseError.columnNotFound(name: column, sql: nil) }
        return try decoder.decode(D.self, from: values[position])
    }
}
#endif
