extension Record {
    /// The record whose single-column primary key is `key`, or nil.
    ///
    /// - throws: ``DatabaseError/invalidArguments(reason:sql:)`` when the
    ///   primary key has more than one column (pass a dictionary), the errors
    ///   of decoding (``DatabaseError/columnNotFound(name:sql:)``,
    ///   ``DatabaseError/typeMismatch(column:value:type:sql:)``,
    ///   ``DatabaseError/decodingFailed(column:type:sql:)``) and SQLite's.
    public static func fetchOne(_ db: Database, key: some DatabaseValueConvertible) throws -> Self? {
        let sql = try keySelection(count: 1, single: true)
        return try fetchAll(db, sql: sql, StatementArguments(databaseValues: [try key.databaseValue])).first
    }

    /// The record whose primary key has the values of `key`, column by column
    /// (as the table names them), or nil.
    ///
    /// ```swift
    /// try Membership.fetchOne(db, key: ["team_id": 1, "player_id": 7])
    /// ```
    /// - throws: ``DatabaseError/invalidArguments(reason:sql:)`` when `key`
    ///   does not name exactly the primary key's columns, and as ``fetchOne(_:key:)-(_,some DatabaseValueConvertible)``.
    public static func fetchOne(_ db: Database, key: [String: (any DatabaseValueConvertible)?]) throws -> Self? {
        let sql = try keySelection(count: 1, single: false)
        return try fetchAll(db, sql: sql, StatementArguments(databaseValues: try keyValues(key, sql: sql))).first
    }

    /// The records whose single-column primary key is one of `keys`, in no
    /// particular order; keys with no row are left out.
    ///
    /// - throws: as ``fetchOne(_:key:)-(_,some DatabaseValueConvertible)``.
    public static func fetchAll(_ db: Database, keys: [some DatabaseValueConvertible]) throws -> [Self] {
        try fetchAll(db, keyValues: keys.map { [try $0.databaseValue] }, single: true)
    }

    /// The records whose primary keys are among `keys` (each a dictionary as
    /// in ``fetchOne(_:key:)-(_,[String:(any DatabaseValueConvertible)?])``).
    ///
    /// - throws: as ``fetchOne(_:key:)-(_,[String:(any DatabaseValueConvertible)?])``.
    public static func fetchAll(_ db: Database, keys: [[String: (any DatabaseValueConvertible)?]]) throws -> [Self] {
        let sql = try keySelection(count: 1, single: false)
        return try fetchAll(db, keyValues: keys.map { try keyValues($0, sql: sql) }, single: false)
    }

    /// Every record of the table. Inlinable (as the cursor's `map` is) so
    /// that the array is built specialized for the record type: built in
    /// generic code, each append looked up `[Self]`'s metadata (7% of a fetch).
    ///
    /// - throws: the errors of decoding and SQLite's (see ``fetchOne(_:key:)-(_,some DatabaseValueConvertible)``).
    @inlinable public static func fetchAll(_ db: Database) throws -> [Self] {
        try fetchCursor(db).map { $0 }
    }

    /// The records of the rows that match an SQL condition.
    ///
    /// ```swift
    /// let best = try Player.fetchAll(db, where: "score > ? ORDER BY score DESC", [100])
    /// ```
    /// - throws: as ``fetchAll(_:)``, and SQLite's error for the condition.
    @inlinable public static func fetchAll(_ db: Database, where condition: String, _ arguments: StatementArguments = StatementArguments()) throws -> [Self] {
        try fetchCursor(db, where: condition, arguments).map { $0 }
    }

    /// Every record of the table, one at a time as the cursor is read: for
    /// tables too large to hold in an array. Read the cursor inside the
    /// closure that gave `db` (see ``DecodedCursor``).
    ///
    /// ```swift
    /// let players = try Player.fetchCursor(db)
    /// while let player = try players.next() { total += player.score }
    /// ```
    /// - throws: SQLite's error for the query; reading the cursor throws as ``fetchAll(_:)`` does.
    public static func fetchCursor(_ db: Database) throws -> DecodedCursor<Self> {
        try fetchCursor(db, sql: RecordSelection.of(Self.self), StatementArguments())
    }

    /// The records of the rows that match an SQL condition, one at a time
    /// as the cursor is read.
    ///
    /// - throws: as ``fetchCursor(_:)``, and SQLite's error for the condition.
    public static func fetchCursor(_ db: Database, where condition: String, _ arguments: StatementArguments = StatementArguments()) throws -> DecodedCursor<Self> {
        try fetchCursor(db, sql: RecordSelection.of(Self.self) + " WHERE " + condition, arguments)
    }

    /// The number of rows of the table.
    ///
    /// - throws: SQLite's error (a table that does not exist, ...).
    public static func fetchCount(_ db: Database) throws -> Int {
        try db.fetchScalar(Int.self, "SELECT count(*) FROM \(SQLIdentifier.quoted(databaseTableName))") ?? 0
    }

    /// Deletes the row whose single-column primary key is `key`; returns whether there was one.
    ///
    /// - throws: as ``fetchOne(_:key:)-(_,some DatabaseValueConvertible)``.
    @discardableResult
    public static func deleteOne(_ db: Database, key: some DatabaseValueConvertible) throws -> Bool {
        _ = try keySelection(count: 1, single: true)   // throws for a key of several columns
        let sql = "DELETE FROM \(SQLIdentifier.quoted(databaseTableName)) WHERE \(SQLIdentifier.quoted(databasePrimaryKey[0])) = ?"
        try db.cachedStatement(sql).execute(StatementArguments(databaseValues: [try key.databaseValue]))
        return db.changes > 0
    }

    /// Deletes every row of the table; returns how many there were.
    ///
    /// - throws: SQLite's error.
    @discardableResult
    public static func deleteAll(_ db: Database) throws -> Int {
        try db.execute("DELETE FROM \(SQLIdentifier.quoted(databaseTableName))")
        return db.changes
    }

    // MARK: -

    /// Decodes every row of `sql` with the type's column naming; the
    /// statement is kept in the connection's cache when `cached`.
    static func fetchAll(_ db: Database, sql: String, _ arguments: StatementArguments, cached: Bool = true) throws -> [Self] {
        try fetchCursor(db, sql: sql, arguments, cached: cached).map { $0 }
    }

    /// A cursor decoding the rows of `sql` with the type's column naming;
    /// the statement is kept in the connection's cache when `cached`.
    static func fetchCursor(_ db: Database, sql: String, _ arguments: StatementArguments, cached: Bool = true) throws -> DecodedCursor<Self> {
        DecodedCursor(rows: try cached ? db.cachedStatement(sql).query(arguments) : db.query(sql, arguments),
                      decode: rowDecoder(for: Self.self, naming: databaseColumnNaming, userInfo: db.userInfo))
    }

    /// The selection of `count` rows by primary key: `WHERE pk = ?` for one,
    /// `WHERE pk IN (?, ...)` or `(a = ? AND b = ?) OR ...` for more.
    ///
    /// - throws: ``DatabaseError/invalidArguments(reason:sql:)`` when
    ///   `single` and the key has another number of columns, or it has none.
    private static func keySelection(count: Int, single: Bool) throws -> String {
        let key = databasePrimaryKey
        let selection = RecordSelection.of(Self.self)
        guard !key.isEmpty, !single || key.count == 1 else {
            throw DatabaseError.invalidArguments(
                reason: "the primary key of \(databaseTableName) has \(key.count) columns (\(key.joined(separator: ", "))): pass their values by name",
                sql: selection)
        }
        if key.count == 1 {
            let column = SQLIdentifier.quoted(key[0])
            return selection + (count == 1 ? " WHERE \(column) = ?" : " WHERE \(column) IN (\(RecordSQL.placeholders(count)))")
        }
        let one = "(" + key.map { "\(SQLIdentifier.quoted($0)) = ?" }.joined(separator: " AND ") + ")"
        return selection + " WHERE " + Array(repeating: one, count: count).joined(separator: " OR ")
    }

    /// The values of `key` in the primary key's order.
    private static func keyValues(_ key: [String: (any DatabaseValueConvertible)?], sql: String) throws -> [DatabaseValue] {
        var byColumn: [String: DatabaseValue] = [:]
        for (column, value) in key { byColumn[column.lowercased()] = try value?.databaseValue ?? .null }
        let primaryKey = databasePrimaryKey
        guard byColumn.count == key.count, Set(byColumn.keys) == Set(primaryKey.map { $0.lowercased() }) else {
            throw DatabaseError.invalidArguments(
                reason: "the key names \(key.keys.sorted().joined(separator: ", ")), and the primary key of \(databaseTableName) is \(primaryKey.joined(separator: ", "))",
                sql: sql)
        }
        return primaryKey.map { byColumn[$0.lowercased()]! }
    }

    /// The records of `keyValues`, a few hundred keys per statement (SQLite
    /// 3.15 binds at most 999 values).
    private static func fetchAll(_ db: Database, keyValues: [[DatabaseValue]], single: Bool) throws -> [Self] {
        let perKey = max(databasePrimaryKey.count, 1)
        let chunk = max(1, 900 / perKey)
        var records: [Self] = []
        var start = 0
        while start < keyValues.count {
            let keys = keyValues[start..<min(start + chunk, keyValues.count)]
            let sql = try keySelection(count: keys.count, single: single)
            // A statement per number of keys: only the full chunk's is worth caching.
            records += try fetchAll(db, sql: sql, StatementArguments(databaseValues: keys.flatMap { $0 }), cached: keys.count == chunk)
            start += chunk
        }
        return records
    }
}
