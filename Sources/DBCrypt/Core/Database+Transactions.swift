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
    public func inTransaction<T>(_ kind: TransactionKind = .deferred, _ body: (Database) throws -> T) throws -> T {
        try connection.run("BEGIN \(kind.rawValue) TRANSACTION")
        let result: T
        do {
            result = try body(self)
            try connection.run("COMMIT TRANSACTION")
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

    /// Rolls back the open transaction, if SQLite has not already done so.
    private func rollbackIfNeeded() {
        if isInsideTransaction { try? connection.run("ROLLBACK TRANSACTION") }
    }
}
