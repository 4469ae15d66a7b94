import Dispatch
import Synchronization

/// A queue's or a pool's writer held by one task across suspension points:
/// what an async transaction needs (SQLKit's `withSession`, Fluent's
/// `db.transaction { tx in ... await ... }`), where the work between two
/// statements is not the database's.
///
/// The writer's thread serves the session's statements, one at a time and
/// in order, until the session ends; every other write waits meanwhile, as
/// it waits for any write closure, and a pool's reads go on on its readers.
/// Writing through the queue or pool itself from the task that holds the
/// session would wait for the session forever, so it throws
/// ``DatabaseError/misuse(reason:)``; so does a write from a task made
/// inside the session (a child task, or `Task {}`, which inherit the
/// session's mark), which the session's body may be waiting for. A
/// detached task's write waits for the session to end.
package final class WriterSession: Sendable {
    /// The queues and pools whose writer the current task holds.
    @TaskLocal static var heldByCurrentTask: [ObjectIdentifier] = []

    private typealias Job = @Sendable (Database) -> Void

    private struct State {
        var jobs: [Job] = []
        var ended = false
    }

    private let state = Mutex(State())
    /// Signalled once per job, and once more when the session ends.
    private let wake = DispatchSemaphore(value: 0)

    fileprivate init() {}

    /// Runs `body` with the writer, on the writer's thread, after the
    /// session's earlier statements.
    ///
    /// - throws: what `body` throws; ``DatabaseError/misuse(reason:)`` once the session has ended.
    package func run<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        guard let result = try await runIfOpen(body) else {
            throw DatabaseError.misuse(reason: "a writer session was used after it ended")
        }
        return result
    }

    /// Runs `body` as ``run(_:)`` does, or returns nil without running it
    /// once the session has ended (for a connection that outlives its
    /// closure, as Fluent's `withConnection` allows, which then goes back
    /// to the queue's or pool's own routing).
    ///
    /// - throws: what `body` throws.
    package func runIfOpen<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T?, Error>) in
            let accepted = state.withLock { state in
                guard !state.ended else { return false }
                state.jobs.append { db in continuation.resume(with: Result { try body(db) }) }
                return true
            }
            if accepted {
                wake.signal()
            } else {
                continuation.resume(returning: nil)
            }
        }
    }

    /// Whether the session has ended.
    package var hasEnded: Bool { state.withLock { $0.ended } }

    /// Runs `body` in an IMMEDIATE transaction on the session: committed
    /// when it returns, rolled back when it throws or when the task was
    /// cancelled meanwhile.
    ///
    /// - throws: what `body` throws, `CancellationError` for a cancelled
    ///   task, or the ``DatabaseError`` of BEGIN or COMMIT.
    package func transaction<T>(_ body: () async throws -> T) async throws -> T {
        try await run { db in try db.execute("BEGIN IMMEDIATE TRANSACTION") }
        do {
            let result = try await body()
            try Task.checkCancellation()
            try await run { db in
                guard db.isInsideTransaction else {
                    throw DatabaseError.sqlite(
                        code: 4, // SQLITE_ABORT
                        message: "SQLite rolled the transaction back after an error inside it, so it was not committed", sql: nil)
                }
                try db.execute("COMMIT TRANSACTION")
            }
            return result
        } catch {
            _ = try? await run { db in if db.isInsideTransaction { try db.execute("ROLLBACK TRANSACTION") } }
            throw error
        }
    }

    /// Serves the session's jobs on the writer's thread until it ends, then
    /// rolls back a transaction the session left open. `afterEach` runs
    /// after each job (a host reports commits to observations there).
    fileprivate func serve(_ db: Database, afterEach: () -> Void) {
        while true {
            wake.wait()
            guard let job = state.withLock({ state in state.jobs.isEmpty ? nil : state.jobs.removeFirst() }) else { break }
            job(db)
            afterEach()
        }
        if db.isInsideTransaction { try? db.execute("ROLLBACK TRANSACTION") }
        afterEach()
    }

    fileprivate func end() {
        state.withLock { $0.ended = true }
        wake.signal()
    }
}

/// What holds its writer for a ``WriterSession``: a ``DatabaseQueue`` or a ``DatabasePool``.
protocol WriterSessionHost: AnyObject {
    /// Runs `serve` on the writer's thread, after the writes queued before
    /// it, with the writer and what reports its commits; or calls `failed`
    /// when the writer cannot be had (closed).
    func holdWriter(
        _ serve: @escaping @Sendable (Database, _ reportCommits: () -> Void) -> Void,
        failed: @escaping @Sendable (Error) -> Void)
}

extension DatabaseWriter {
    /// Holds the writer for `body`, which may suspend between statements:
    /// see ``WriterSession``. The session ends when `body` returns or
    /// throws; a transaction it left open is rolled back.
    ///
    /// - throws: ``DatabaseError/misuse(reason:)`` when the task already
    ///   holds this writer, ``DatabaseError/reentrantQueueAccess`` from
    ///   inside one of its closures, ``DatabaseError/connectionClosed``, or
    ///   what `body` throws.
    package func withWriterSession<T>(_ body: (WriterSession) async throws -> T) async throws -> T {
        try HeldQueues.checkWriterIsFree(self)
        guard let host = self as? any WriterSessionHost else {
            throw DatabaseError.misuse(reason: "\(type(of: self)) cannot hold its writer across suspension points")
        }
        let session = WriterSession()
        try await withCheckedThrowingContinuation { (started: CheckedContinuation<Void, Error>) in
            host.holdWriter({ db, reportCommits in
                started.resume()
                session.serve(db, afterEach: reportCommits)
            }, failed: { error in started.resume(throwing: error) })
        }
        defer { session.end() }
        return try await WriterSession.$heldByCurrentTask.withValue(WriterSession.heldByCurrentTask + [ObjectIdentifier(self)]) {
            try await body(session)
        }
    }
}
