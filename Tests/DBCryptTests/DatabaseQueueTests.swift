import Dispatch
import Foundation
import XCTest
import CSQLCipher
@testable import DBCrypt

/// One connection behind a serial queue: many threads and tasks, nothing lost,
/// no deadlock when called from inside itself.
final class DatabaseQueueTests: XCTestCase {
    let key = DatabaseKey.named("queue")

    private func makeQueue() throws -> (DatabaseQueue, String) {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("queue.db").path
        return (try TestFixtures.makeQueue(path, key: key, schema: "CREATE TABLE t(thread INTEGER, n INTEGER)"), path)
    }

    /// Eight threads each commit their rows one by one on one queue: none is
    /// lost or doubled. 250 rows each in `make test` (every commit is flushed
    /// to disk, most of the time), the thousand it was written with in `make
    /// kill-tests`.
    func testEightThreadsWritingRowsEachLoseNothing() throws {
        let (queue, path) = try makeQueue()
        let failures = Failures()
        let rows = KillCampaign.size(quick: 250, full: 1000)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for n in 0..<rows {
                do {
                    try queue.inDatabase { db in try db.execute("INSERT INTO t VALUES (?, ?)", [thread, n]) }
                } catch {
                    failures.record(error)
                }
            }
        }
        XCTAssertEqual(failures.count, 0)
        try queue.close()
        let db = try Database(path: path, key: key)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM t"), 8 * rows)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(DISTINCT thread * 10000 + n) FROM t"), 8 * rows)
        XCTAssertEqual(try db.fetchScalar(String.self, "PRAGMA integrity_check"), "ok")
    }

    func testAsyncReadAndWriteFromManyTasks() async throws {
        let (queue, _) = try makeQueue()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                group.addTask {
                    for n in 0..<50 {
                        try await queue.write { db in try db.execute("INSERT INTO t VALUES (?, ?)", [task, n]) }
                    }
                }
            }
            try await group.waitForAll()
        }
        let count = try await queue.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM t") }
        XCTAssertEqual(count, 800)
    }

    func testAsyncReadIsReadOnlyAndWriteRollsBackOnError() async throws {
        let (queue, _) = try makeQueue()
        do {
            _ = try await queue.read { db in try db.execute("INSERT INTO t VALUES (1, 1)") }
            XCTFail("a write inside read succeeded")
        } catch let error as DatabaseError {
            XCTAssertEqual(error.resultCode, 8) // SQLITE_READONLY
        }
        struct Boom: Error {}
        do {
            _ = try await queue.write { db in
                try db.execute("INSERT INTO t VALUES (2, 2)")
                throw Boom()
            }
            XCTFail("the write did not throw")
        } catch is Boom {}
        // After read, the connection writes again; the failed write left nothing.
        try await queue.write { db in try db.execute("INSERT INTO t VALUES (3, 3)") }
        let rows = try await queue.read { db in try db.fetchAll(Int.self, "SELECT n FROM t") }
        XCTAssertEqual(rows, [3])
    }

    func testReentrantCallIsReportedNotADeadlock() async throws {
        let (queue, _) = try makeQueue()
        let error = try queue.inDatabase { _ -> Error? in
            do {
                try queue.inDatabase { _ in }
                return nil
            } catch {
                return error
            }
        }
        XCTAssertEqual(error as? DatabaseError, .reentrantQueueAccess)
        XCTAssertThrowsError(try queue.inTransaction { _ in try queue.inTransaction { _ in } }) { error in
            XCTAssertEqual(error as? DatabaseError, .reentrantQueueAccess)
        }
        // The queue still works afterwards.
        XCTAssertEqual(try queue.inDatabase { try $0.fetchScalar(Int.self, "SELECT 1") }, 1)
    }

    func testInTransactionRollsBackOnThrow() throws {
        let (queue, _) = try makeQueue()
        struct Boom: Error {}
        XCTAssertThrowsError(try queue.inTransaction { db in
            try db.execute("INSERT INTO t VALUES (1, 1)")
            throw Boom()
        })
        XCTAssertEqual(try queue.inDatabase { try $0.fetchScalar(Int.self, "SELECT count(*) FROM t") }, 0)
    }

    func testWrongKeyFailsAtQueueCreation() throws {
        let (queue, path) = try makeQueue()
        try queue.close()
        XCTAssertThrowsError(try DatabaseQueue(path: path, key: .named("wrong"))) { error in
            XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: path))
        }
    }

    func testClosedQueueThrows() throws {
        let (queue, _) = try makeQueue()
        try queue.close()
        XCTAssertThrowsError(try queue.inDatabase { try $0.execute("SELECT 1") }) { error in
            XCTAssertEqual(error as? DatabaseError, .connectionClosed)
        }
    }

    func testReleasingAQueueClosesItsConnection() throws {
        let (queue, path) = try makeQueue()
        try queue.close()
        // The queue holds an exclusive lock until its connection closes.
        weak var released: DatabaseQueue?
        do {
            let transient = try DatabaseQueue(path: path, key: key)
            try transient.inDatabase { try $0.execute("PRAGMA locking_mode = EXCLUSIVE; INSERT INTO t VALUES (0, 0)") }
            released = transient
        }
        XCTAssertNil(released)
        var options = Database.Options()
        options.busyTimeout = .seconds(0)
        XCTAssertNoThrow(try Database(path: path, key: key, options: options).execute("INSERT INTO t VALUES (1, 1)"))
    }

    func testReentranceThroughAnotherQueueIsReportedNotACrash() throws {
        let (a, _) = try makeQueue()
        let (b, _) = try makeQueue()
        XCTAssertThrowsError(try a.inDatabase { _ in try b.inDatabase { _ in try a.inDatabase { _ in } } }) { error in
            XCTAssertEqual(error as? DatabaseError, .reentrantQueueAccess)
        }
        XCTAssertThrowsError(try a.write { _ in try b.read { _ in try a.read { _ in } } }) { error in
            XCTAssertEqual(error as? DatabaseError, .reentrantQueueAccess)
        }
        XCTAssertThrowsError(try a.inDatabase { _ in try b.inDatabase { _ in try a.close() } })
        // Nesting distinct queues is fine, and both still work afterwards.
        XCTAssertEqual(try a.inDatabase { _ in try b.inDatabase { try $0.fetchScalar(Int.self, "SELECT 2") } }, 2)
        XCTAssertEqual(try a.inDatabase { try $0.fetchScalar(Int.self, "SELECT 1") }, 1)
    }

    func testReadThenWriteTransactionsDoNotFailUnderContention() throws {
        for mode in [Database.JournalMode.default, .wal] {
            let path = try makeTemporaryDirectory(self).appendingPathComponent("contention.db").path
            var options = Database.Options()
            options.journalMode = mode
            let raw = try DatabaseKey(rawKey: [UInt8](repeating: 3, count: 32))
            let queues = try (0..<2).map { _ in try DatabaseQueue(path: path, key: raw, options: options) }
            try queues[0].write { db in try db.execute("CREATE TABLE counter(n INTEGER); INSERT INTO counter VALUES (0)") }
            let failures = Failures()
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                for _ in 0..<100 {
                    do {
                        // Read, then write what was read: the lost-update shape.
                        try queues[index].inTransaction { db in
                            let n = try db.fetchScalar(Int.self, "SELECT n FROM counter") ?? 0
                            try db.execute("UPDATE counter SET n = ?", [n + 1])
                        }
                    } catch {
                        failures.record(error)
                    }
                }
            }
            XCTAssertEqual(failures.count, 0, "journal mode \(mode)")
            XCTAssertEqual(try queues[0].read { db in try db.fetchScalar(Int.self, "SELECT n FROM counter") }, 200)
        }
    }

    func testAReadSeesOneSnapshotWhileAnotherConnectionWrites() throws {
        for mode in [Database.JournalMode.default, .wal] {
            let path = try makeTemporaryDirectory(self).appendingPathComponent("snapshot.db").path
            var options = Database.Options()
            options.journalMode = mode
            options.busyTimeout = .seconds(10)
            let raw = try DatabaseKey(rawKey: [UInt8](repeating: 4, count: 32))
            let reader = try DatabaseQueue(path: path, key: raw, options: options)
            let writer = try DatabaseQueue(path: path, key: raw, options: options)
            try writer.write { db in try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
            // The writer tells when it first waits for a lock (and then keeps trying).
            let blocked = DispatchSemaphore(value: 0)
            try writer.inDatabase { db in
                try db.withSQLiteHandle { handle in
                    sqlite3_busy_handler(handle, { context, attempts in
                        if attempts == 0 { Unmanaged<DispatchSemaphore>.fromOpaque(context!).takeUnretainedValue().signal() }
                        sched_yield()
                        return 1
                    }, Unmanaged.passUnretained(blocked).toOpaque())
                }
            }
            let done = DispatchSemaphore(value: 0)
            let counts = try reader.read { db -> [Int] in
                let first = try db.fetchScalar(Int.self, "SELECT count(*) FROM t") ?? -1
                // Another connection writes between the two SELECTs. In WAL
                // mode it commits at once; with a rollback journal it waits
                // for this read to end, so it runs on another thread, and the
                // second SELECT runs once it is waiting.
                DispatchQueue.global().async {
                    _ = try? writer.write { db in try db.execute("INSERT INTO t VALUES (2)") }
                    done.signal()
                }
                XCTAssertEqual((mode == .wal ? done : blocked).wait(timeout: .now() + 30), .success, "journal mode \(mode)")
                let second = try db.fetchScalar(Int.self, "SELECT count(*) FROM t") ?? -1
                return [first, second]
            }
            XCTAssertEqual(counts, [1, 1], "journal mode \(mode)")
            if mode != .wal { XCTAssertEqual(done.wait(timeout: .now() + 30), .success, "the write never ended") }
            XCTAssertEqual(try reader.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM t") }, 2)
        }
    }

    func testAClosedQueueRunsNoClosure() throws {
        let (queue, _) = try makeQueue()
        try queue.close()
        XCTAssertNoThrow(try queue.close(), "closing twice does nothing")
        var ran = false
        XCTAssertThrowsError(try queue.inDatabase { _ in ran = true }) { error in
            XCTAssertEqual(error as? DatabaseError, .connectionClosed)
        }
        XCTAssertThrowsError(try queue.read { _ in ran = true })
        XCTAssertThrowsError(try queue.write { _ in ran = true })
        XCTAssertFalse(ran)
    }

    func testAClosedQueueRunsNoAsyncClosure() async throws {
        let (queue, _) = try makeQueue()
        try queue.close()
        for attempt in 0..<3 {
            do {
                switch attempt {
                case 0: try await queue.writeWithoutTransaction { _ in }
                case 1: try await queue.write { _ in }
                default: try await queue.read { _ in }
                }
                XCTFail("a closed queue ran an async closure")
            } catch {
                XCTAssertEqual(error as? DatabaseError, .connectionClosed)
            }
        }
    }

    func testWriteWithoutTransactionRunsWhatATransactionCannot() async throws {
        let (queue, path) = try makeQueue()
        let mode = try await queue.writeWithoutTransaction { db -> String? in
            try db.execute("INSERT INTO t VALUES (1, 1); DELETE FROM t")
            try db.execute("VACUUM")
            return try db.fetchScalar(String.self, "PRAGMA journal_mode = WAL")
        }
        XCTAssertEqual(mode, "wal")
        let persisted = try await queue.read { db in try db.fetchScalar(String.self, "PRAGMA journal_mode") }
        XCTAssertEqual(persisted, "wal")
        _ = path
        // Inside a write, VACUUM is refused by SQLite and rolled back.
        await XCTAssertThrowsAsync(try await queue.write { db in try db.execute("VACUUM") })
        let inside = try await queue.writeWithoutTransaction { db in db.isInsideTransaction }
        XCTAssertFalse(inside)
    }
}

/// Errors collected from many threads.
private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [Error] = []
    func record(_ error: Error) { lock.lock(); errors.append(error); lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return errors.count }
}

/// Asserts that `body` throws.
func XCTAssertThrowsAsync<T>(_ body: @autoclosure () async throws -> T, file: StaticString = #filePath, line: UInt = #line) async {
    do {
        _ = try await body()
        XCTFail("did not throw", file: file, line: line)
    } catch {}
}
