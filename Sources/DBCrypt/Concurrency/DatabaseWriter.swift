/// What reads a database safely from any thread or task: a ``DatabaseQueue``
/// or a ``DatabasePool``. Code that only reads takes `some DatabaseReader`.
public protocol DatabaseReader: AnyObject, Sendable {
    /// The path of the database.
    var path: String { get }

    /// Runs `body` in one read transaction and waits for it: every query
    /// sees the same snapshot, and writing is refused.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess`` from inside one of
    ///   the reader's own closures, ``DatabaseError/connectionClosed`` once
    ///   closed, what `body` throws.
    func read<T>(_ body: (Database) throws -> T) throws -> T

    /// Runs `body` with no transaction of its own (GRDB's `unsafeRead`): each
    /// statement sees the latest commit when it starts, and one statement is
    /// one consistent snapshot, but two statements may see different ones.
    /// For a read that is a single statement, it saves the transaction's
    /// cost; a ``DatabaseQueue`` runs it as ``read(_:)-(((Database)->T))``.
    /// Writing is refused.
    ///
    /// - throws: see ``read(_:)-(((Database)->T))``.
    func unsafeRead<T>(_ body: (Database) throws -> T) throws -> T

    /// Runs `body` in one read transaction without blocking the caller's thread.
    ///
    /// - throws: see ``read(_:)-(((Database)->T))``.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T

    /// Writes a copy of the database as it is at one commit to `destination`,
    /// keyed with `key` (and, for another key, `cipher`): see
    /// ``DatabasePool/backup(to:key:cipher:options:)`` and
    /// ``DatabaseQueue/backup(to:key:cipher:options:)``, which say who waits.
    ///
    /// - throws: see ``DatabaseQueue/backup(to:key:cipher:options:)``.
    func backup(to destination: String, key: BackupEncryption, cipher: CipherSettings?, options: ExportOptions) throws

    /// The values of `fetch`, as an `AsyncSequence`: the first at once, then a
    /// new one after each commit that changed a table `fetch` read (commits
    /// to other tables cost nothing). Each fetch runs in one read
    /// transaction. The sequence ends when the task that iterates it is
    /// cancelled, and throws what `fetch` throws.
    ///
    /// Commits made through other connections to the file (another process,
    /// such as an app extension or the `dbcrypt` tool, or another queue or
    /// pool in this one) are not seen by the hooks. With
    /// `checkingOtherProcessesEvery`, the writer's `PRAGMA data_version` is
    /// read at that interval while the observation lasts, and a change
    /// fetches again: a value follows such a commit within the interval,
    /// plus any write the writer is busy with, plus the fetch. Each check
    /// costs a lock and a look at the WAL index or file header, and no
    /// page read.
    ///
    /// With `isDuplicate`, a value it calls a duplicate of the one before
    /// it is not delivered.
    ///
    /// ```swift
    /// for try await count in pool.observe({ db in try db.fetchScalar(Int.self, "SELECT count(*) FROM note") }) {
    ///     print(count)
    /// }
    /// ```
    func observe<T: Sendable>(
        checkingOtherProcessesEvery interval: Duration?, removingDuplicatesBy isDuplicate: (@Sendable (T, T) -> Bool)?,
        _ fetch: @escaping @Sendable (Database) throws -> T
    ) -> AsyncThrowingStream<T, Error>
}

extension DatabaseReader {
    /// The values of `fetch` after each commit that changed what it read:
    /// see ``observe(checkingOtherProcessesEvery:removingDuplicatesBy:_:)``.
    public func observe<T: Sendable>(
        checkingOtherProcessesEvery interval: Duration? = nil, _ fetch: @escaping @Sendable (Database) throws -> T
    ) -> AsyncThrowingStream<T, Error> {
        observe(checkingOtherProcessesEvery: interval, removingDuplicatesBy: nil, fetch)
    }

    /// As ``observe(checkingOtherProcessesEvery:_:)``, without a value equal
    /// to the one before it when `removingDuplicates` is true.
    public func observe<T: Sendable & Equatable>(
        removingDuplicates: Bool, checkingOtherProcessesEvery interval: Duration? = nil,
        _ fetch: @escaping @Sendable (Database) throws -> T
    ) -> AsyncThrowingStream<T, Error> {
        observe(checkingOtherProcessesEvery: interval, removingDuplicatesBy: removingDuplicates ? { @Sendable (a: T, b: T) -> Bool in a == b } : nil, fetch)
    }
}

/// What also writes: a ``DatabaseQueue`` or a ``DatabasePool``. Code that
/// writes (the ``SchemaMigrator``, an app's own stores) takes `some DatabaseWriter`.
public protocol DatabaseWriter: DatabaseReader {
    /// Runs `body` in an IMMEDIATE transaction and waits for it: committed
    /// when it returns, rolled back when it throws.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess``, ``DatabaseError/connectionClosed``,
    ///   what `body` throws, or the ``DatabaseError`` of BEGIN or COMMIT;
    ///   ``DatabaseError/misuse(reason:)`` from a task that holds the writer
    ///   in an SQLKit session or a Fluent transaction (this and every other
    ///   write waits for the writer, which serves that transaction alone).
    func write<T>(_ body: (Database) throws -> T) throws -> T

    /// Runs `body` with no transaction and waits for it, for statements that
    /// cannot run inside one (`VACUUM`, `PRAGMA journal_mode`).
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess``, ``DatabaseError/connectionClosed``,
    ///   or what `body` throws.
    func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T

    /// Runs `body` in an IMMEDIATE transaction without blocking the caller's thread.
    ///
    /// - throws: see ``write(_:)-(((Database)->T))``.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T

    /// Runs `body` with no transaction without blocking the caller's thread.
    ///
    /// - throws: see ``writeWithoutTransaction(_:)-(((Database)->T))``.
    func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T
}

extension DatabaseQueue: DatabaseWriter, ObservationHost, WriterSessionHost {}
extension DatabasePool: DatabaseWriter, ObservationHost, WriterSessionHost {}

/// What a queue and a pool each provide so that `observe` is written once.
protocol ObservationHost: AnyObject, Sendable {
    /// The observations, and the commits they hear about.
    var observations: ObservationCenter { get }
    /// Notices other connections' commits for observations that ask.
    var otherConnections: OtherConnectionsPoller! { get }
    /// Makes the writer report its commits, then calls `then`.
    func prepareObservation(then: @escaping @Sendable (Error?) -> Void)
    /// Runs `fetch` in one read transaction, recording the tables it reads.
    func fetchRecordingTables<T>(_ fetch: (Database) throws -> T) throws -> (T, Set<String>)
}

extension ObservationHost {
    /// How many observations are registered, for tests.
    var observationCount: Int { observations.count }
    /// Whether some observation has other connections' commits checked for, for tests.
    var isCheckingOtherProcesses: Bool { otherConnections.isPolling }

    /// The observation behind `observe`: `isDuplicate` tells a value not to
    /// deliver after the one before it.
    func observing<T: Sendable>(
        _ fetch: @escaping @Sendable (Database) throws -> T, every interval: Duration?, isDuplicate: (@Sendable (T, T) -> Bool)?
    ) -> AsyncThrowingStream<T, Error> {
        observation(
            center: observations, removingDuplicates: isDuplicate, poller: otherConnections, pollingEvery: interval,
            prepare: { [self] then in prepareObservation(then: then) }
        ) { [self] in try fetchRecordingTables(fetch) }
    }
}
