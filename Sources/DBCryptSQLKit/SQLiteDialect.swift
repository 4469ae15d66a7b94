#if SQLKit
import CSQLCipher
import SQLKit

/// SQLite's SQL as the linked engine has it: what SQLKit and Fluent write
/// for a DBCrypt database. Features arrive with SQLite versions, so the
/// dialect is built for one: on Debian 12's SQLite 3.15.2 there are no
/// `TRUE`/`FALSE` literals (1 and 0 are written instead), no UPSERT, no
/// RETURNING, no `json_extract` and no `DROP COLUMN`; SQLCipher 4's SQLite
/// has them all.
public struct DBCryptSQLiteDialect: SQLDialect {
    /// The SQLite whose SQL this is.
    public let version: SQLiteVersion
    /// Whether the engine has the JSON functions (built in since 3.38, an
    /// option before).
    public let hasJSON: Bool

    /// The dialect of the linked SQLCipher's SQLite.
    public init() {
        self.init(version: .linked, hasJSON: Self.linkedHasJSON)
    }

    /// The dialect of SQLite `version`, with or without its JSON functions.
    public init(version: SQLiteVersion, hasJSON: Bool) {
        self.version = version
        self.hasJSON = hasJSON
    }

    private static let linkedHasJSON = SQLiteVersion.linked.isAtLeast(3, 38) || sqlite3_compileoption_used("ENABLE_JSON1") == 1

    /// "sqlite".
    public var name: String { "sqlite" }
    /// Identifiers are quoted with `"`.
    public var identifierQuote: any SQLExpression { SQLRaw("\"") }
    /// Strings are quoted with `'`.
    public var literalStringQuote: any SQLExpression { SQLRaw("'") }
    /// Numbered parameters: `?1`, `?2`.
    public func bindPlaceholder(at position: Int) -> any SQLExpression { SQLRaw("?\(position)") }
    /// `TRUE` and `FALSE` from SQLite 3.23, 1 and 0 before.
    public func literalBoolean(_ value: Bool) -> any SQLExpression {
        version.isAtLeast(3, 23) ? SQLRaw(value ? "TRUE" : "FALSE") : SQLRaw(value ? "1" : "0")
    }
    /// SQLite has no `DEFAULT` value expression: NULL takes a column's default for an INTEGER PRIMARY KEY.
    public var literalDefault: any SQLExpression { SQLLiteral.null }
    /// `IF EXISTS` and `IF NOT EXISTS`.
    public var supportsIfExists: Bool { true }
    /// No `CASCADE` or `RESTRICT` on DROP.
    public var supportsDropBehavior: Bool { false }
    /// An INTEGER PRIMARY KEY is the row id, numbered without `AUTOINCREMENT`.
    public var supportsAutoIncrement: Bool { false }
    /// `AUTOINCREMENT`, where asked for.
    public var autoIncrementClause: any SQLExpression { SQLRaw("AUTOINCREMENT") }
    /// No enum types: enums are text.
    public var enumSyntax: SQLEnumSyntax { .unsupported }
    /// Triggers with a body, a `WHEN` condition and `UPDATE OF` columns.
    public var triggerSyntax: SQLTriggerSyntax {
        .init(create: [.supportsBody, .supportsCondition, .supportsUpdateColumns], drop: [])
    }
    /// One change per `ALTER TABLE`.
    public var alterTableSyntax: SQLAlterTableSyntax { .init(allowsBatch: false) }
    /// `ON CONFLICT ... DO UPDATE` from SQLite 3.24.
    public var upsertSyntax: SQLUpsertSyntax { version.isAtLeast(3, 24) ? .standard : .unsupported }
    /// `RETURNING` from SQLite 3.35.
    public var supportsReturning: Bool { version.isAtLeast(3, 35) }
    /// Whether `ALTER TABLE ... DROP COLUMN` exists (SQLite 3.35).
    public var supportsDropColumn: Bool { version.isAtLeast(3, 35) }
    /// UNION, UNION ALL, INTERSECT and EXCEPT.
    public var unionFeatures: SQLUnionFeatures { [.union, .unionAll, .intersect, .except] }

    /// BIGINT is INTEGER, so that a 64-bit primary key is the row id.
    public func customDataType(for dataType: SQLDataType) -> (any SQLExpression)? {
        if case .bigint = dataType { return SQLDataType.int }
        return nil
    }

    /// `json_extract(column, '$.a.b')` where the engine has JSON, nil (not
    /// supported) where it has not.
    public func nestedSubpathExpression(in column: any SQLExpression, for path: [String]) -> (any SQLExpression)? {
        guard hasJSON, !path.isEmpty else { return nil }
        return SQLFunction("json_extract", args: [column, SQLLiteral.string("$.\(path.joined(separator: "."))")])
    }
}
#endif
