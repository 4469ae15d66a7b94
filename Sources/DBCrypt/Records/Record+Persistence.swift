extension Record {
    /// The record's columns and the statements for them.
    func encoded() throws -> (EncodedRecord, RecordSQL) {
        let record = try EncodedRecord(self, table: Self.databaseTableName, naming: Self.databaseColumnNaming)
        return (record, RecordSQL.of(Self.self, record))
    }

    /// The record's columns as they are written to `db`: placed values
    /// (sealed properties) in their stored form.
    func encodedForWriting(_ db: Database) throws -> (EncodedRecord, RecordSQL) {
        var (record, sql) = try encoded()
        try record.resolvePlacedValues(sql, userInfo: db.userInfo)
        return (record, sql)
    }

    /// Inserts the record as a new row, then calls ``didInsert(rowID:)``
    /// with the row's rowid (a nil `INTEGER PRIMARY KEY` gets a new one).
    ///
    /// - throws: ``DatabaseError/recordEncodingFailed(table:column:reason:)``
    ///   for a value that cannot be stored (or a placed value, such as a
    ///   sealed property, without the row's key), what a placed value
    ///   throws (DBCryptSeal's `SealError`), and SQLite's error with the
    ///   statement's SQL: a constraint (`SQLITE_CONSTRAINT_UNIQUE` when the
    ///   key exists, ...), a column the table does not have.
    public mutating func insert(_ db: Database) throws {
        // The fast path: the values bound as they are encoded, when the
        // record encodes the keys of the type's last record. (Another
        // record's INSERT may not prepare here: then the record's own does.)
        if let sql = RecordSQL.cached(Self.self), !sql.hasPlacedValues, let statement = try? db.cachedStatement(sql.insert) {
            try statement.prepareToBind(count: sql.keys.count)
            if try EncodedRecord.bind(
                self, to: statement, keys: sql.keys, table: sql.table, naming: Self.databaseColumnNaming, reusing: db.recordBinding) {
                try statement.executeWithCurrentBindings()
                didInsert(rowID: db.lastInsertRowID)
                return
            }
        }
        let (record, sql) = try encodedForWriting(db)
        try db.cachedStatement(sql.insert).execute(StatementArguments(databaseValues: record.values))
        didInsert(rowID: db.lastInsertRowID)
    }

    /// A copy of the record, inserted (see ``insert(_:)``).
    ///
    /// - throws: as ``insert(_:)``.
    public func inserted(_ db: Database) throws -> Self {
        var copy = self
        try copy.insert(db)
        return copy
    }

    /// Writes every column of the record to the row with its primary key.
    ///
    /// - throws: ``DatabaseError/missingPrimaryKey(table:column:sql:)`` when
    ///   the record has no value for a primary key column,
    ///   ``DatabaseError/recordNotFound(table:sql:)`` when no row has it, and
    ///   the errors of ``insert(_:)``.
    public func update(_ db: Database) throws {
        let (record, sql) = try encodedForWriting(db)
        try update(db, record, sql, positions: sql.otherPositions)
    }

    /// Writes the columns named in `columns` (as the table names them) to the
    /// row with the record's primary key.
    ///
    /// - throws: as ``update(_:)``, and ``DatabaseError/columnNotFound(name:sql:)``
    ///   for a name the record has no property for.
    public func update(_ db: Database, columns: [String]) throws {
        let (record, sql) = try encodedForWriting(db)
        let lowercased = sql.columns.map { $0.lowercased() }
        let positions = try columns.map { column in
            guard let position = lowercased.firstIndex(of: column.lowercased()) else {
                throw DatabaseError.columnNotFound(name: column, sql: sql.updateAll)
            }
            return position
        }
        try update(db, record, sql, positions: positions)
    }

    /// Writes the columns whose values differ from `old`'s, if any, to the
    /// row with the record's primary key; returns whether it wrote any.
    ///
    /// ```swift
    /// let old = player
    /// player.score += 1
    /// try player.updateChanges(db, from: old)   // UPDATE player SET score = ? WHERE id = ?
    /// ```
    /// - throws: as ``update(_:)``.
    @discardableResult
    public func updateChanges(_ db: Database, from old: Self) throws -> Bool {
        var (record, sql) = try encoded()
        let before = try EncodedRecord(old, table: sql.table, naming: Self.databaseColumnNaming)
        let changed = sql.otherPositions.filter { record.differs(at: $0, from: before) }
        guard !changed.isEmpty else { return false }
        try record.resolvePlacedValues(sql, userInfo: db.userInfo)
        try update(db, record, sql, positions: changed)
        return true
    }

    /// Applies `change` to the record, then writes the columns it changed;
    /// returns whether it wrote any.
    ///
    /// ```swift
    /// try player.updateChanges(db) { $0.score += 1 }
    /// ```
    /// - throws: what `change` throws (the record is then unchanged), and as ``update(_:)``.
    @discardableResult
    public mutating func updateChanges(_ db: Database, _ change: (inout Self) throws -> Void) throws -> Bool {
        var changed = self
        try change(&changed)
        let wrote = try changed.updateChanges(db, from: self)
        self = changed
        return wrote
    }

    /// Inserts the record, or updates the row that has its primary key.
    ///
    /// Where SQLite has UPSERT (3.24 and later) this is one `INSERT ... ON
    /// CONFLICT(primary key) DO UPDATE`. On older SQLite (Debian's SQLCipher
    /// 3.4.1 is on 3.15.2) it is an `UPDATE` and, when no row changed, an
    /// `INSERT`, both in one savepoint. Either way an existing row keeps its
    /// rowid and no DELETE trigger fires, unlike `INSERT OR REPLACE`. A
    /// record with a nil `INTEGER PRIMARY KEY` is inserted, and
    /// ``didInsert(rowID:)`` called.
    ///
    /// - throws: as ``insert(_:)``; a constraint other than the primary key
    ///   (a `UNIQUE` column) fails as it would in an insert.
    public mutating func upsert(_ db: Database) throws {
        let (record, sql) = try encodedForWriting(db)
        if sql.primaryKey.isEmpty || sql.primaryKeyPositions.contains(where: { $0 == nil }) {
            _ = try sql.keyValues(record, for: sql.nativeUpsert ?? sql.insert)   // throws: no such key column
        }
        guard sql.primaryKeyPositions.allSatisfy({ !record.values[$0!].isNull }) else {
            try insert(db)
            return
        }
        if let upsert = sql.nativeUpsert {
            // An update leaves the last inserted rowid as it was: only a new one means an insert.
            let before = db.lastInsertRowID
            try db.cachedStatement(upsert).execute(StatementArguments(databaseValues: record.values))
            if db.lastInsertRowID != before { didInsert(rowID: db.lastInsertRowID) }
            return
        }
        let updated: Bool = try db.inSavepoint { db in
            if !sql.otherPositions.isEmpty {
                try self.run(db, record, sql, positions: sql.otherPositions)
                if db.changes > 0 { return true }
            } else if try exists(db, record, sql) {
                return true
            }
            try db.cachedStatement(sql.insert).execute(StatementArguments(databaseValues: record.values))
            return false
        }
        if !updated { didInsert(rowID: db.lastInsertRowID) }
    }

    /// Deletes the row with the record's primary key; returns whether there was one.
    ///
    /// - throws: ``DatabaseError/missingPrimaryKey(table:column:sql:)``, and SQLite's error.
    @discardableResult
    public func delete(_ db: Database) throws -> Bool {
        let (record, sql) = try encoded()
        try db.cachedStatement(sql.delete).execute(StatementArguments(databaseValues: try sql.keyValues(record, for: sql.delete)))
        return db.changes > 0
    }

    /// Whether a row has the record's primary key.
    ///
    /// - throws: ``DatabaseError/missingPrimaryKey(table:column:sql:)``, and SQLite's error.
    public func exists(_ db: Database) throws -> Bool {
        let (record, sql) = try encoded()
        return try exists(db, record, sql)
    }

    // MARK: -

    private func exists(_ db: Database, _ record: EncodedRecord, _ sql: RecordSQL) throws -> Bool {
        let arguments = StatementArguments(databaseValues: try sql.keyValues(record, for: sql.exists))
        return try db.cachedStatement(sql.exists).query(arguments).next() != nil
    }

    private func update(_ db: Database, _ record: EncodedRecord, _ sql: RecordSQL, positions: [Int]) throws {
        guard !positions.isEmpty else {
            // Nothing to write but the key: the row must still exist.
            guard try exists(db, record, sql) else {
                throw DatabaseError.recordNotFound(table: sql.table, sql: sql.exists)
            }
            return
        }
        let text = try run(db, record, sql, positions: positions)
        if db.changes == 0 { throw DatabaseError.recordNotFound(table: sql.table, sql: text) }
    }

    /// Runs the `UPDATE` of `positions`; returns its SQL.
    @discardableResult
    private func run(_ db: Database, _ record: EncodedRecord, _ sql: RecordSQL, positions: [Int]) throws -> String {
        let text = positions == sql.otherPositions ? sql.updateAll : sql.update(positions)
        let values = positions.map { record.values[$0] } + (try sql.keyValues(record, for: text))
        try db.cachedStatement(text).execute(StatementArguments(databaseValues: values))
        return text
    }
}
