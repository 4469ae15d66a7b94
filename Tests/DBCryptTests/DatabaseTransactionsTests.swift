import CSQLCipher
import XCTest
@testable import DBCrypt

/// Transactions commit on return and roll back on throw; savepoints nest.
final class DatabaseTransactionsTests: XCTestCase {
    struct Boom: Error {}
    var db: Database!
    var path: String!
    let key = DatabaseKey.named("transactions")

    override func tearDown() {
        db = nil   // closed with its test: XCTest keeps test cases until the process exits
        super.tearDown()
    }

    override func setUpWithError() throws {
        path = try makeTemporaryDirectory(self).appendingPathComponent("tx.db").path
        db = try Database(path: path, key: key)
        try db.execute("CREATE TABLE t(x INTEGER)")
    }

    private func values() throws -> [Int] { try db.fetchAll(Int.self, "SELECT x FROM t ORDER BY x") }

    func testTransactionCommitsOnReturnAndIsDurable() throws {
        for kind in [Database.TransactionKind.deferred, .immediate, .exclusive] {
            try db.inTransaction(kind) { db in try db.execute("INSERT INTO t VALUES (?)", [values().count + 1]) }
        }
        XCTAssertFalse(db.isInsideTransaction)
        db.close()
        db = try Database(path: path, key: key)
        XCTAssertEqual(try values(), [1, 2, 3])
    }

    func testThrowingTransactionRollsBack() throws {
        try db.execute("INSERT INTO t VALUES (1)")
        XCTAssertThrowsError(try db.inTransaction { db in
            try db.execute("INSERT INTO t VALUES (2)")
            try db.execute("DELETE FROM t WHERE x = 1")
            XCTAssertTrue(db.isInsideTransaction)
            throw Boom()
        }) { XCTAssertTrue($0 is Boom) }
        XCTAssertFalse(db.isInsideTransaction)
        XCTAssertEqual(try values(), [1])
    }

    func testFailingStatementInsideTransactionRollsBackEverything() throws {
        XCTAssertThrowsError(try db.inTransaction { db in
            try db.execute("INSERT INTO t VALUES (1)")
            try db.execute("INSERT INTO no_such_table VALUES (1)")
        })
        XCTAssertEqual(try values(), [])
    }

    func testNestedSavepointsRollBackOnlyTheirOwnWork() throws {
        try db.inTransaction { db in
            try db.execute("INSERT INTO t VALUES (1)")
            try db.inSavepoint { db in
                try db.execute("INSERT INTO t VALUES (2)")
                XCTAssertThrowsError(try db.inSavepoint { db in
                    try db.execute("INSERT INTO t VALUES (3)")
                    try db.inSavepoint { db in try db.execute("INSERT INTO t VALUES (4)") }
                    throw Boom()
                })
                try db.inSavepoint { db in try db.execute("INSERT INTO t VALUES (5)") }
            }
            XCTAssertThrowsError(try db.inSavepoint { db in
                try db.execute("INSERT INTO t VALUES (6)")
                throw Boom()
            })
        }
        XCTAssertEqual(try values(), [1, 2, 5])
    }

    func testSavepointOutsideTransactionActsAsOne() throws {
        XCTAssertThrowsError(try db.inSavepoint { db in
            try db.execute("INSERT INTO t VALUES (1)")
            throw Boom()
        })
        try db.inSavepoint { db in try db.execute("INSERT INTO t VALUES (2)") }
        XCTAssertFalse(db.isInsideTransaction)
        XCTAssertEqual(try values(), [2])
    }

    func testTransactionInsideTransactionIsAnSQLiteError() throws {
        try db.inTransaction { db in
            XCTAssertThrowsError(try db.inTransaction { _ in }) { error in
                XCTAssertTrue("\(error)".contains("within a transaction"), "\(error)")
            }
            // The outer transaction is still usable and commits.
            try db.execute("INSERT INTO t VALUES (7)")
        }
        XCTAssertEqual(try values(), [7])
    }

    func testATransactionSQLiteRolledBackIsNotReportedAsCommitted() throws {
        try db.execute("CREATE TABLE u(x UNIQUE ON CONFLICT ROLLBACK); INSERT INTO u VALUES (1)")
        XCTAssertThrowsError(try db.inTransaction { db in
            try db.execute("INSERT INTO t VALUES (10)")
            XCTAssertThrowsError(try db.execute("INSERT INTO u VALUES (1)"), "the conflict rolls the whole transaction back")
            try db.execute("INSERT INTO t VALUES (11)")
        }) { error in
            XCTAssertEqual((error as? DatabaseError)?.resultCode, 4) // SQLITE_ABORT
        }
        XCTAssertFalse(try values().contains(10))
    }

    /// A deferred transaction that read, then writes after another
    /// connection committed, fails at once (SQLITE_BUSY_SNAPSHOT, 517),
    /// whatever the busy timeout: the message says why and what to do.
    func testAStaleDeferredTransactionSaysToRetryOrBeginImmediate() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("wal.db").path
        var options = Database.Options()
        options.journalMode = .wal
        let first = try Database(path: path, options: options)
        let second = try Database(path: path, options: options)
        try first.execute("CREATE TABLE t(a)")
        XCTAssertThrowsError(try first.inTransaction(.deferred) { db in
            _ = try db.fetchScalar(Int.self, "SELECT count(*) FROM t")
            try second.execute("INSERT INTO t VALUES (1)")
            try db.execute("INSERT INTO t VALUES (2)")
        }) { error in
            XCTAssertEqual((error as? DatabaseError)?.extendedResultCode, 517)
            XCTAssertTrue("\(error)".contains("roll back and retry it, or begin it with BEGIN IMMEDIATE"), "\(error)")
        }
        XCTAssertNoThrow(try first.inTransaction(.immediate) { db in try db.execute("INSERT INTO t VALUES (2)") })
    }

    /// A deferred transaction that read, then writes while another
    /// connection holds the write lock, is refused at once (SQLITE_BUSY,
    /// long before a 5 s busy timeout): the message names the upgrade and
    /// BEGIN IMMEDIATE, not the timeout. A transaction whose first statement
    /// writes does wait out its timeout, and its message says that. In both
    /// journal modes.
    func testARefusedLockUpgradeIsNotBlamedOnTheBusyTimeout() throws {
        for mode in [Database.JournalMode.wal, .delete] {
            let path = try makeTemporaryDirectory(self).appendingPathComponent("\(mode).db").path
            var options = Database.Options()
            options.journalMode = mode
            options.busyTimeout = .seconds(5)
            let first = try Database(path: path, options: options)
            var shortWait = options
            shortWait.busyTimeout = .milliseconds(50)
            let second = try Database(path: path, options: shortWait)
            try first.execute("CREATE TABLE t(a)")
            try first.execute("BEGIN IMMEDIATE")
            XCTAssertThrowsError(try second.inTransaction(.deferred) { db in
                _ = try db.fetchScalar(Int.self, "SELECT count(*) FROM t")
                try db.execute("INSERT INTO t VALUES (2)")
            }) { error in
                XCTAssertEqual((error as? DatabaseError)?.resultCode, SQLITE_BUSY, "\(mode)")
                guard case .lockUpgradeRefused = error as? DatabaseError else { return XCTFail("\(mode): \(error)") }
                XCTAssertTrue("\(error)".contains("could not wait for the write lock"), "\(error)")
                XCTAssertTrue("\(error)".contains("BEGIN IMMEDIATE"), "\(error)")
                XCTAssertFalse("\(error)".contains("past the busy timeout"), "\(error)")
            }
            XCTAssertThrowsError(try second.inTransaction(.deferred) { db in try db.execute("INSERT INTO t VALUES (3)") }) { error in
                guard case let .sqlite(code, _, _) = error as? DatabaseError else { return XCTFail("\(mode): \(error)") }
                XCTAssertEqual(code, SQLITE_BUSY, "\(mode)")
                XCTAssertTrue("\(error)".contains("past the busy timeout"), "\(error)")
            }
            try first.execute("COMMIT")
            XCTAssertNoThrow(try second.inTransaction(.deferred) { db in
                _ = try db.fetchScalar(Int.self, "SELECT count(*) FROM t")
                try db.execute("INSERT INTO t VALUES (4)")
            })
        }
    }

    func testTransactionsOnAReadOnlyConnectionAreDeferred() throws {
        try db.execute("INSERT INTO t VALUES (1)")
        var options = Database.Options()
        options.readOnly = true
        let reader = try Database(path: path, key: key, options: options)
        XCTAssertEqual(try reader.inTransaction { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM t") }, 1)
        XCTAssertEqual(try reader.inTransaction(.exclusive) { db in try db.fetchScalar(Int.self, "SELECT x FROM t") }, 1)
    }

    func testAReadLeavesAConnectionsQueryOnlySettingAsItWas() throws {
        let queue = try DatabaseQueue(path: path, key: key)
        try queue.inDatabase { db in try db.execute("PRAGMA query_only = 1") }
        _ = try queue.read { db in try db.fetchAll("SELECT * FROM t") }
        XCTAssertEqual(try queue.inDatabase { db in try db.fetchScalar(Bool.self, "PRAGMA query_only") }, true)
        XCTAssertThrowsError(try queue.inDatabase { db in try db.execute("INSERT INTO t VALUES (1)") })
        try queue.inDatabase { db in try db.execute("PRAGMA query_only = 0") }
        _ = try queue.read { db in try db.fetchAll("SELECT * FROM t") }
        XCTAssertNoThrow(try queue.write { db in try db.execute("INSERT INTO t VALUES (1)") })
    }
}
