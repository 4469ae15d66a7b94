import Dispatch

/// One database connection behind a serial queue, shared safely between
/// threads and tasks.
///
/// ```swift
/// let queue = try DatabaseQueue(path: "notes.db", key: .passphrase(secret))
/// try queue.write { db in
///     try db.execute("INSERT INTO note(title) VALUES (?)", ["Hello"])
/// }
/// let count = try await queue.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM note") }
/// ```
///
/// Every closure runs on the queue, one at a time, with the connection
/// opened (and keyed, and checked) once at creation. The defaults are the
/// ones that hold up when other connections use the same file:
///
/// - `write` and ``inTransaction(_:_:)`` begin IMMEDIATE: the
///   write lock is taken (or waited for, up to the busy timeout) before the
///   closure reads, so a read-then-write transaction never fails half-way
///   with `SQLITE_BUSY`. DEFERRED and EXCLUSIVE are there by name.
/// - `read` is one read transaction: every query in it sees the same
///   state of the database, and it cannot write (`PRAGMA query_only`). In
///   WAL mode other connections commit meanwhile and the read keeps its
///   snapshot; with a rollback journal (the default) the read holds a shared
///   lock, so their commits wait for it (up to their busy timeout).
/// - `writeWithoutTransaction` and ``inDatabase(_:)`` run with no
///   transaction, for `VACUUM`, `PRAGMA journal_mode` and the like.
///
/// Calling a queue from inside one of its own closures, at any depth (even
/// through another queue's closure), would wait on itself forever, so it
/// throws ``DatabaseError/reentrantQueueAccess`` instead: use the `Database`
/// the closure was given.
public final class DatabaseQueue: @unchecked Sendable {
    // @unchecked: `database` is touched only on `queue`, which is serial.
    private let database: Database
    private let queue: DispatchQueue

    /// The path of the database.
    public let path: String

    /// Opens the database at `path` and puts the connection behind a new serial queue.
    ///
    /// - throws: everything ``Database/init(path:key:options:)`` throws, at once.
    public init(path: String, key: DatabaseKey? = nil, options: Database.Options = Database.Options()) throws {
        database = try Database(path: path, key: key, options: options)
        self.path = path
        queue = DispatchQueue(label: "DBCrypt.DatabaseQueue")
        otherConnections = OtherConnectionsPoller(
            queue: queue, readVersion: { [weak self] in self?.database.dataVersionReading() },
            changed: { [observations] in observations.otherConnectionCommitted() })
    }

    /// The connection's hooks, installed (on the queue) by the first
    /// observation: until then writes pay nothing for observation.
    private var tracker: ChangeTracker?
    let observations = ObservationCenter()
    /// Notices other connections' commits for observations that ask;
    /// set once, at the end of `init`.
    private(set) var otherConnections: OtherConnectionsPoller!

    // MARK: - Observation

    /// ``DatabaseReader/observe(checkingOtherProcessesEvery:removingDuplicatesBy:_:)``, fetching on the queue.
    public func observe<T: Sendable>(checkingOtherProcessesEvery interval: Duration?, removingDuplicatesBy isDuplicate: (@Sendable (T, T) -> Bool)?,
                                     _ fetch: @escaping @Sendable (Database) throws -> T) -> AsyncThrowingStream<T, Error> {
        observing(fetch, every: interval, isDuplicate: isDuplicate)
    }

    /// Installs the hooks on the queue, then calls `then`. Cached statements
    /// are dropped first: SQLite consults the authorizer when it prepares.
    func prepareObservation(then: @escaping @Sendable (Error?) -> Void) {
        queue.async { [self] in
            do {
                if tracker == nil {
                    database.clearStatementCache()
                    tracker = try database.connection.changeTracker ?? ChangeTracker.install(on: database.connection)
                }
                then(nil)
            } catch {
                then(error)
            }
        }
    }

    /// Runs `fetch` on the queue in one read transaction, recording the tables it reads.
    func fetchRecordingTables<T>(_ fetch: (Database) throws -> T) throws -> (T, Set<String>) {
        try HeldQueues.checkWriterIsFree(self)
        return try queue.sync {
            try run { (db: Database) -> (T, Set<String>) in
                try db.inReadSnapshot { (db: Database) -> (T, Set<String>) in try db.recordingTablesRead(fetch) }
            }
        }
    }

    // MARK: - Synchronous access

    /// Runs `body` with the connection, on the queue, and waits for it. No
    /// transaction is opened (FMDB's `inDatabase`).
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess`` when called from inside
    ///   this queue's closure, ``DatabaseError/connectionClosed`` after
    ///   ``close()``, or what `body` throws.
    public func inDatabase<T>(_ body: (Database) throws -> T) throws -> T {
        try HeldQueues.checkWriterIsFree(self)
        return try queue.sync { try run(body) }
    }

    /// Runs `body` in a transaction on the queue and waits for it: committed
    /// when it returns, rolled back when it throws. IMMEDIATE by default.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess``, ``DatabaseError/connectionClosed``,
    ///   what `body` throws, or the ``DatabaseError`` of BEGIN or COMMIT.
    public func inTransaction<T>(
        _ kind: Database.TransactionKind = .immediate, _ body: (Database) throws -> T
    ) throws -> T {
        try inDatabase { db in try db.inTransaction(kind, body) }
    }

    /// Runs `body` in an IMMEDIATE transaction on the queue and waits for it:
    /// committed when it returns, rolled back when it throws.
    ///
    /// - throws: see ``inTransaction(_:_:)``.
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try inTransaction(.immediate, body)
    }

    /// Runs `body` in one read transaction on the queue and waits for it:
    /// every query sees the same snapshot, and writing is refused.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess``, ``DatabaseError/connectionClosed``,
    ///   what `body` throws, or an `SQLITE_READONLY` ``DatabaseError`` when it writes.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try inDatabase { db in try db.inReadSnapshot(body) }
    }

    /// The same as ``read(_:)-(((Database)->T))`` on a queue: its one
    /// connection can write, so the read transaction is what refuses writes.
    ///
    /// - throws: see ``read(_:)-(((Database)->T))``.
    public func unsafeRead<T>(_ body: (Database) throws -> T) throws -> T {
        try read(body)
    }

    /// Runs `body` on the queue with no transaction and waits for it, for
    /// statements that cannot run inside one (`VACUUM`, `PRAGMA journal_mode`).
    ///
    /// - throws: see ``inDatabase(_:)``.
    public func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try inDatabase(body)
    }

    // MARK: - Asynchronous access

    /// Runs `body` in one read transaction on the queue without blocking the
    /// caller's thread: every query sees the same snapshot, and writing is refused.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess``, ``DatabaseError/connectionClosed``,
    ///   what `body` throws, or an `SQLITE_READONLY` ``DatabaseError`` when it writes.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await onQueueAsync { db in try db.inReadSnapshot(body) }
    }

    /// Runs `body` in an IMMEDIATE transaction on the queue without blocking
    /// the caller's thread: committed when it returns, rolled back when it throws.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess``, ``DatabaseError/connectionClosed``,
    ///   what `body` throws, or the ``DatabaseError`` of BEGIN or COMMIT.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await onQueueAsync { db in try db.inTransaction(.immediate, body) }
    }

    /// Runs `body` on the queue with no transaction, without blocking the
    /// caller's thread: for `VACUUM`, `PRAGMA journal_mode` and the like.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess``, ``DatabaseError/connectionClosed``,
    ///   or what `body` throws.
    public func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await onQueueAsync(body)
    }

    // MARK: - Closing

    /// Closes the connection once the work already queued is done. Later
    /// calls throw ``DatabaseError/connectionClosed``; closing twice does
    /// nothing. Releasing the queue also closes it.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess`` when called from inside the queue.
    public func close() throws {
        try HeldQueues.checkWriterIsFree(self)
        queue.sync { database.close() }
    }

    /// Closes the connection once the work already queued is done, without
    /// the checkpoint SQLite runs when the last connection to a WAL database
    /// closes: see ``Database/closeWithoutCheckpoint()``.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess`` when called from inside the queue.
    public func closeWithoutCheckpoint() throws {
        try HeldQueues.checkWriterIsFree(self)
        queue.sync { database.closeWithoutCheckpoint() }
    }

    /// Runs `serve` on the queue, after the work queued before it, for a ``WriterSession``.
    func holdWriter(
        _ serve: @escaping @Sendable (Database, _ reportCommits: () -> Void) -> Void,
        failed: @escaping @Sendable (Error) -> Void
    ) {
        queue.async { [self] in
            do {
                try run { database in
                    serve(database) { if let tracker { observations.committed(tracker.takeCommitted()) } }
                }
            } catch {
                failed(error)
            }
        }
    }

    /// Runs `body` on the current thread, which is running the queue.
    private func run<T>(_ body: (Database) throws -> T) throws -> T {
        defer { if let tracker { observations.committed(tracker.takeCommitted()) } }
        return try HeldQueues.holding(self) {
            guard !database.isClosed else { throw DatabaseError.connectionClosed }
            return try body(database)
        }
    }

    private func onQueueAsync<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try HeldQueues.checkWriterIsFree(self)
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.run(body) })
            }
        }
    }
}
