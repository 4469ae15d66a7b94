/// What the schema table's statements say about what they made.
package enum SchemaStatement {
    /// Whether `sql`, a schema row's statement, made a virtual table: SQLite
    /// writes such a statement starting "CREATE VIRTUAL TABLE" (compared as
    /// SQL's LIKE compares, whatever the case).
    package static func makesVirtualTable(_ sql: String) -> Bool {
        sql.prefix(20).uppercased() == "CREATE VIRTUAL TABLE"
    }

    /// ``makesVirtualTable(_:)`` as an SQL condition on `sqlite_master`'s
    /// `sql` column (false where it is NULL).
    package static let makesVirtualTableSQL = "coalesce(sql, '') LIKE 'CREATE VIRTUAL TABLE%'"
}
