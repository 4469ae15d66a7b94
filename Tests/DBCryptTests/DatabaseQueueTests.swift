import Dispatch
import Foundation
import XCTest
@testable import DBCrypt

/// One connection behind a serial queue: many threads and tasks, nothing lost,
/// no deadlock when called from inside itself.
final class DatabaseQueueTests: XCTestCase {
    let key = DatabaseKey.passphrase("queue")

    private func makeQueue() throws -> (DatabaseQueue, String) {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("queue.db").path
        let queue = try DatabaseQueue(path: path, key: key)
        try queue.inDatabase { try $0.execute("CREATE TABLE t(thread INTEGER, n INTEGER)") }
        return (queue, path)
    }

    func testEightThreadsWritingAThousandRowsEachLoseNothing() throws {
        let (queue, path) = try makeQueue()
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for n in 0..<1000 {
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
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM t"), 8000)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(DISTINCT thread * 10000 + n) FROM t"), 8000)
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
        XCTAssertThrowsError(try DatabaseQueue(path: path, key: .passphrase("wrong"))) { error in
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
        options.busyTimeout = 0
        XCTAssertNoThrow(try Database(path: path, key: key, options: options).execute("INSERT INTO t VALUES (1, 1)"))
    }
}

/// Errors collected from many threads.
private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [Error] = []
    func record(_ error: Error) { lock.lock(); errors.append(error); lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return errors.count }
}
