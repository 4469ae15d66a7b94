import Foundation
import XCTest
@testable import DBCrypt

/// Every read transaction refuses writes, not only the first: SQLite sets
/// `query_only` when it prepares the pragma, so it must be prepared each time.
final class ReadSnapshotTests: XCTestCase {
    func testEveryReadRefusesWrites() throws {
        let queue = try DatabaseQueue(path: try makeTemporaryDirectory(self).appendingPathComponent("q.db").path)
        try queue.write { db in try db.execute("CREATE TABLE t(x)") }
        for _ in 0..<3 {
            XCTAssertThrowsError(try queue.read { db in try db.execute("INSERT INTO t VALUES (1)") })
            try queue.write { db in try db.execute("INSERT INTO t VALUES (2)") }
        }
        XCTAssertEqual(try queue.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM t") }, 3)
    }

    /// A pool's readers are opened read-only and skip the pragma: they still refuse.
    func testEveryPoolReadRefusesWrites() throws {
        let pool = try DatabasePool(path: try makeTemporaryDirectory(self).appendingPathComponent("p.db").path)
        try pool.write { db in try db.execute("CREATE TABLE t(x)") }
        for _ in 0..<3 {
            XCTAssertThrowsError(try pool.read { db in try db.execute("INSERT INTO t VALUES (1)") })
            try pool.write { db in try db.execute("INSERT INTO t VALUES (2)") }
        }
        XCTAssertEqual(try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM t") }, 3)
    }
}
