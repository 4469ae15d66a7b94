import Dispatch

/// One database connection behind a serial queue, shared safely between
/// threads and tasks.
///
/// ```swift
/// let queue = try DatabaseQueue(path: "notes.db", key: .passphrase(secret))
/// try queue.inTransaction { db in
///     try db.execute("INSERT INTO note(title) VALUES (?)", ["Hello"])
/// }
/// let count = try await queue.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM note") }
/// ```
///
/// Every closure runs on the queue, one at a time, with the connection
/// opened (and keyed, and checked) once at creation. Calling the queue from
/// inside one of its own closures would deadlock, so it throws
/// ``DatabaseError/reentrantQueueAccess`` instead: use the `Database` the
/// closure was given.
public final class DatabaseQueue: @unchecked Sendable {
    // @unchecked: `database` is touched only on `queue`, which is serial.
    private let database: Database
    private let queue: DispatchQueue
    private let onQueue = DispatchSpecificKey<Bool>()

    /// The path of the database.
    public let path: String

    /// Opens the database at `path` and puts the connection behind a new serial queue.
    ///
    /// - throws: everything ``Database/init(path:key:options:)`` throws, at once.
    public init(path: String, key: DatabaseKey? = nil, options: Database.Options = Database.Options()) throws {
        database = try Database(path: path, key: key, options: options)
        self.path = path
        queue = DispatchQueue(label: "DBCrypt.DatabaseQueue")
        queue.setSpecific(key: onQueue, value: true)
    }

    /// Runs `body` with the connection, on the queue, and waits for it.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess`` when called from inside
    ///   this queue's closure, or what `body` throws.
    public func inDatabase<T>(_ body: (Database) throws -> T) throws -> T {
        guard DispatchQueue.getSpecific(key: onQueue) == nil else { throw DatabaseError.reentrantQueueAccess }
        return try queue.sync { try body(database) }
    }

    /// Runs `body` in a transaction on the queue: committed when it returns,
    /// rolled back when it throws.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess``, what `body` throws, or
    ///   the ``DatabaseError`` of BEGIN or COMMIT.
    public func inTransaction<T>(
        _ kind: Database.TransactionKind = .deferred, _ body: (Database) throws -> T
    ) throws -> T {
        try inDatabase { db in try db.inTransaction(kind, body) }
    }

    /// Runs `body` on the queue without blocking the caller's thread, with the
    /// connection read-only (`PRAGMA query_only`) for the duration.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess``, what `body` throws, or
    ///   an `SQLITE_READONLY` ``DatabaseError`` when `body` tries to write.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await onQueueAsync { db in
            try db.execute("PRAGMA query_only = 1")
            defer { try? db.execute("PRAGMA query_only = 0") }
            return try body(db)
        }
    }

    /// Runs `body` in an immediate transaction on the queue without blocking
    /// the caller's thread: committed when it returns, rolled back when it throws.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess``, what `body` throws, or
    ///   the ``DatabaseError`` of BEGIN or COMMIT.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await onQueueAsync { db in try db.inTransaction(.immediate, body) }
    }

    /// Closes the connection once the work already queued is done. Later
    /// calls throw ``DatabaseError/connectionClosed``. Releasing the queue
    /// also closes it.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess`` when called from inside the queue.
    public func close() throws {
        try inDatabase { $0.close() }
    }

    private func onQueueAsync<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        guard DispatchQueue.getSpecific(key: onQueue) == nil else { throw DatabaseError.reentrantQueueAccess }
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try body(self.database) })
            }
        }
    }
}
