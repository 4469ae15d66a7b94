import CSQLCipher

extension Database {
    /// How a transaction takes its locks.
    public enum TransactionKind: String, Sendable {
        /// Takes locks when first reading or writing (`BEGIN DEFERRED`).
        case deferred = "DEFERRED"
        /// Takes the write lock at once (`BEGIN IMMEDIATE`).
        case immediate = "IMMEDIATE"
        /// Takes an exclusive lock at once (`BEGIN EXCLUSIVE`).
        case exclusive = "EXCLUSIVE"
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when
    /// it throws, and rethrows.
    ///
    /// The default, IMMEDIATE, takes the write lock before `body` runs
    /// (waiting for it up to the busy timeout), so a transaction that reads
    /// and then writes never fails half-way because another connection wrote
    /// first. Pass `.deferred` for a transaction that only reads. On a
    /// connection opened read-only, which cannot take the write lock, every
    /// transaction is DEFERRED.
    ///
    /// When a statement fails in a way that makes SQLite roll the whole
    /// transaction back (a full disk, an I/O error, `ON CONFLICT ROLLBACK`)
    /// and `body` catches that error and returns, nothing is committed and
    /// this throws ``DatabaseError/sqlite(code:message:sql:)`` with
    /// `SQLITE_ABORT`: the statements `body` ran after it were not part of
    /// the transaction.
    ///
    /// ```swift
    /// try db.inTransaction { db in
    ///     try db.execute("UPDATE account SET balance = balance - 10 WHERE id = 1")
    ///     try db.execute("UPDATE account SET balance = balance + 10 WHERE id = 2")
    /// }
    /// ```
    /// Inside another transaction, use ``inSavepoint(_:)``.
    /// - throws: what `body` throws, or the ``DatabaseError`` of BEGIN or COMMIT
    ///   (after which the transaction is rolled back).
    @discardableResult
    public func inTransaction<T>(_ kind: TransactionKind = .immediate, _ body: (Database) throws -> T) throws -> T {
        let db = try connection.open()
        let kind = kind != .deferred && sqlite3_db_readonly(db, "main") == 1 ? .deferred : kind
        try connection.runPrepared("BEGIN \(kind.rawValue) TRANSACTION")
        let result: T
        do {
            result = try body(self)
            guard isInsideTransaction else {
                throw DatabaseError.sqlite(
                    code: SQLITE_ABORT,
                    message: "SQLite rolled the transaction back after an error inside it, so it was not committed",
                    sql: nil)
            }
            try connection.runPrepared("COMMIT TRANSACTION")
        } catch {
            rollbackIfNeeded()
            throw error
        }
        return result
    }

    /// Runs `body` in a savepoint, which nests inside transactions and other
    /// savepoints: released when `body` returns, rolled back to (undoing only
    /// what `body` did) when it throws.
    ///
    /// - throws: what `body` throws, or the ``DatabaseError`` of SAVEPOINT or RELEASE.
    @discardableResult
    public func inSavepoint<T>(_ body: (Database) throws -> T) throws -> T {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "dbcrypt_savepoint_\(savepointDepth)"
        try connection.run("SAVEPOINT \(name)")
        let result: T
        do {
            result = try body(self)
            try connection.run("RELEASE SAVEPOINT \(name)")
        } catch {
            // ROLLBACK TO keeps the savepoint on the stack; RELEASE removes it.
            // If SQLite already rolled back the whole transaction, both fail: ignore.
            try? connection.run("ROLLBACK TO SAVEPOINT \(name)")
            try? connection.run("RELEASE SAVEPOINT \(name)")
            throw error
        }
        return result
    }

    /// Begins a read transaction and takes its snapshot now, for a read that
    /// another thread finishes with ``endReadSnapshot()``.
    func beginReadSnapshot() throws {
        try connection.runPrepared("BEGIN DEFERRED TRANSACTION")
        do {
            try connection.runPrepared("SELECT 1 FROM sqlite_master LIMIT 1")
        } catch {
            try? connection.run("ROLLBACK")
            throw error
        }
    }

    /// Ends the read transaction ``beginReadSnapshot()`` began, if it is still open.
    func endReadSnapshot() {
        if isInsideTransaction { _ = try? connection.runPrepared("COMMIT TRANSACTION") }
    }

    /// Runs `body` in one read transaction that starts before it: every query
    /// in it sees the same state of the database. Writing is refused
    /// (`PRAGMA query_only`) for the duration; the setting is then put back.
    func inReadSnapshot<T>(_ body: (Database) throws -> T) throws -> T {
        // A connection opened read-only (a pool's reader) cannot write anyway.
        // Otherwise not through runPrepared: SQLite reads and sets this flag
        // when it prepares the pragma, so a kept statement would do nothing.
        let wasQueryOnly = try sqlite3_db_readonly(connection.open(), "main") == 1
            || connection.firstValue("PRAGMA query_only") == .integer(1)
        if !wasQueryOnly { try connection.run("PRAGMA query_only = 1") }
        defer { if !wasQueryOnly { try? connection.run("PRAGMA query_only = 0") } }
        return try inTransaction(.deferred) { db in
            // A deferred transaction takes its snapshot at its first read: make that now.
            try connection.runPrepared("SELECT 1 FROM sqlite_master LIMIT 1")
            return try body(db)
        }
    }

    /// Rolls back the open transaction, if SQLite has not already done so.
    private func rollbackIfNeeded() {
        if isInsideTransaction { try? connection.run("ROLLBACK TRANSACTION") }
    }
}
