import Foundation
import XCTest
@testable import DBCrypt

/// Every read transaction refuses writes, not only the first: SQLite sets
/// `query_only` when it prepares the pragma, so it must be prepared each time.
final class ReadSnapshotTests: XCTestCase {
    func testEveryReadRefusesWrites() throws {
        let dir = try makeTemporaryDirectory(self)
        try assertEveryReadRefusesWrites(DatabaseQueue(path: dir.appendingPathComponent("q.db").path))
        // A pool's readers are opened read-only and skip the pragma: they still refuse.
        try assertEveryReadRefusesWrites(DatabasePool(path: dir.appendingPathComponent("p.db").path))
    }

    private func assertEveryReadRefusesWrites(_ writer: some DatabaseWriter) throws {
        try writer.write { db in try db.execute("CREATE TABLE t(x)") }
        for _ in 0..<3 {
            XCTAssertThrowsError(try writer.read { db in try db.execute("INSERT INTO t VALUES (1)") }, "\(type(of: writer))")
            try writer.write { db in try db.execute("INSERT INTO t VALUES (2)") }
        }
        XCTAssertEqual(try writer.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM t") }, 3, "\(type(of: writer))")
    }

    /// unsafeRead: no transaction of its own, so each statement sees the
    /// latest commit; still no writes, and no re-entry.
    func testUnsafeReadSeesEachCommitAndRefusesWrites() throws {
        let pool = try DatabasePool(path: try makeTemporaryDirectory(self).appendingPathComponent("p.db").path)
        try pool.write { db in try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        let counts = try pool.unsafeRead { db -> [Int?] in
            let before = try db.fetchScalar(Int.self, "SELECT count(*) FROM t")
            try pool.concurrentWriteForTest { try $0.execute("INSERT INTO t VALUES (2)") }
            return [before, try db.fetchScalar(Int.self, "SELECT count(*) FROM t")]
        }
        XCTAssertEqual(counts, [1, 2], "the second statement did not see the commit made between the two")
        XCTAssertThrowsError(try pool.unsafeRead { db in try db.execute("INSERT INTO t VALUES (3)") })
        XCTAssertThrowsError(try pool.unsafeRead { _ in try pool.unsafeRead { _ in } }) {
            XCTAssertEqual($0 as? DatabaseError, .reentrantQueueAccess)
        }
        let queue = try DatabaseQueue(path: try makeTemporaryDirectory(self).appendingPathComponent("q.db").path)
        try queue.write { db in try db.execute("CREATE TABLE t(x)") }
        XCTAssertThrowsError(try queue.unsafeRead { db in try db.execute("INSERT INTO t VALUES (3)") })
    }
}

private extension DatabasePool {
    /// A write from another thread, waited for: the caller holds the pool's
    /// reader, so it cannot write from its own.
    func concurrentWriteForTest(_ body: @escaping @Sendable (Database) throws -> Void) throws {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: Error?
        DispatchQueue.global().async {
            do { try self.write(body) } catch { failure = error }
            done.signal()
        }
        done.wait()
        if let failure { throw failure }
    }
}
