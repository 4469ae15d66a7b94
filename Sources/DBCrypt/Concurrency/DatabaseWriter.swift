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

    /// The values of `fetch` as an `AsyncSequence`: the first at once, then
    /// one after each commit that changed a table `fetch` read; with
    /// `checkingOtherProcessesEvery`, other connections' commits too. See
    /// ``DatabasePool/observe(checkingOtherProcessesEvery:_:)``.
    func observe<T: Sendable>(
        checkingOtherProcessesEvery interval: Duration?, _ fetch: @escaping @Sendable (Database) throws -> T
    ) -> AsyncThrowingStream<T, Error>

    /// As ``observe(checkingOtherProcessesEvery:_:)``, without a value equal
    /// to the one before it when `removingDuplicates` is true.
    func observe<T: Sendable & Equatable>(
        removingDuplicates: Bool, checkingOtherProcessesEvery interval: Duration?,
        _ fetch: @escaping @Sendable (Database) throws -> T
    ) -> AsyncThrowingStream<T, Error>
}

/// What also writes: a ``DatabaseQueue`` or a ``DatabasePool``. Code that
/// writes (the ``SchemaMigrator``, an app's own stores) takes `some DatabaseWriter`.
public protocol DatabaseWriter: DatabaseReader {
    /// Runs `body` in an IMMEDIATE transaction and waits for it: committed
    /// when it returns, rolled back when it throws.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess``, ``DatabaseError/connectionClosed``,
    ///   what `body` throws, or the ``DatabaseError`` of BEGIN or COMMIT.
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

extension DatabaseQueue: DatabaseWriter {}
extension DatabasePool: DatabaseWriter {}
