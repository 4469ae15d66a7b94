import Foundation
import TestFixtures
import XCTest
@testable import DBCrypt

/// `closing(after:)` on real WAL files: SQLite's checkpoint on close only
/// after a body that succeeded and committed.
final class DatabaseClosingTests: XCTestCase {
    let key = DatabaseKey.passphrase("closing test passphrase")
    var path: String!

    override func setUpWithError() throws {
        path = try makeTemporaryDirectory(self).appendingPathComponent("app.db").path
        let db = try Database(path: path, key: key, options: walOptions)
        try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)")
        db.close()
        XCTAssertFalse(WriteAheadLogFile.hasFrames(besideDatabaseAt: path))
    }

    private var walOptions: Database.Options {
        var options = Database.Options()
        options.journalMode = .wal
        return options
    }

    private func logStat() -> (size: Int64, modified: timespec)? {
        var info = stat()
        guard stat(path + "-wal", &info) == 0 else { return nil }
        return (Int64(info.st_size), info.st_mtim)
    }

    private func rows() throws -> Int {
        let db = try Database(path: path, key: key)
        defer { db.closeWithoutCheckpoint() }
        return try db.fetchScalar(Int.self, "SELECT count(*) FROM item") ?? -1
    }

    func testACommitIsCheckpointedOnClose() throws {
        let db = try Database(path: path, key: key, options: walOptions)
        try db.closing { try db.execute("INSERT INTO item(body) VALUES ('one')") }
        XCTAssertTrue(db.isClosed)
        XCTAssertFalse(WriteAheadLogFile.hasFrames(besideDatabaseAt: path), "the commit was left in the log")
        XCTAssertEqual(try rows(), 1)

        let queue = try DatabaseQueue(path: path, key: key, options: walOptions)
        let result = try queue.closing { try queue.write { db in try db.execute("INSERT INTO item(body) VALUES ('two')") }; return 7 }
        XCTAssertEqual(result, 7)
        XCTAssertFalse(WriteAheadLogFile.hasFrames(besideDatabaseAt: path), "the queue's commit was left in the log")
        XCTAssertEqual(try rows(), 2)
    }

    func testAFailedBodyLeavesItsCommitsInTheLog() throws {
        struct Stop: Error {}
        let db = try Database(path: path, key: key, options: walOptions)
        XCTAssertThrowsError(try db.closing {
            try db.execute("INSERT INTO item(body) VALUES ('one')")
            throw Stop()
        }) { error in XCTAssertTrue(error is Stop, "\(error)") }
        XCTAssertTrue(db.isClosed)
        XCTAssertTrue(WriteAheadLogFile.hasFrames(besideDatabaseAt: path), "a failed run was checkpointed")
        XCTAssertEqual(try rows(), 1)
    }

    func testAReadLeavesTheLogAsItWas() throws {
        let writer = try Database(path: path, key: key, options: walOptions)
        try writer.execute("INSERT INTO item(body) VALUES ('one')")
        writer.closeWithoutCheckpoint()
        let before = try XCTUnwrap(logStat())
        XCTAssertTrue(WriteAheadLogFile.hasFrames(besideDatabaseAt: path))

        let queue = try DatabaseQueue(path: path, key: key, options: walOptions)
        let count = try queue.closing { try queue.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM item") } }
        XCTAssertEqual(count, 1)
        let after = try XCTUnwrap(logStat(), "a read removed the log")
        XCTAssertEqual(after.size, before.size, "a read checkpointed the log")
        XCTAssertEqual(after.modified.tv_sec, before.modified.tv_sec)
        XCTAssertEqual(after.modified.tv_nsec, before.modified.tv_nsec)
    }
}
