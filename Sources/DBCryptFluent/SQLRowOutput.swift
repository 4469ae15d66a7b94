#if Fluent
import FluentKit
import SQLKit

/// An SQLKit row as Fluent's query output: a field of a joined model is the
/// column `<schema>_<field>`.
struct SQLRowOutput: DatabaseOutput {
    let row: any SQLRow
    let schema: String?

    var description: String { "\(row.allColumns)" }

    private func column(_ key: FieldKey) -> String {
        (schema.map { .prefix(.prefix(.string($0), "_"), key) } ?? key).description
    }

    func schema(_ schema: String) -> any DatabaseOutput { SQLRowOutput(row: row, schema: schema) }
    func contains(_ key: FieldKey) -> Bool { row.contains(column: column(key)) }
    func decodeNil(_ key: FieldKey) throws -> Bool { try row.decodeNil(column: column(key)) }
    func decode<T: Decodable>(_ key: FieldKey, as type: T.Type) throws -> T { try row.decode(column: column(key), as: T.self) }
}
#endif
