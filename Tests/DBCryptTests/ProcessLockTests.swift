import Foundation
import XCTest
@testable import DBCrypt
import SQLCipherFormat

/// The file locks another process sees while DBCrypt has a database open.
/// POSIX drops every lock a process holds on a file when the process closes
/// any descriptor of that file, so DBCrypt never opens the file of a
/// database behind SQLite's back (SQLite keeps such descriptors open until
/// its locks are released). The other process is Debian's `sqlcipher`
/// shell, whose busy timeout is 0: a lock it meets is an immediate error.
final class ProcessLockTests: XCTestCase {
    let passphrase = "lock passphrase"
    /// The shell reads SQLCipher 3 files only.
    var options: Database.Options {
        var options = Database.Options()
        options.cipher = .sqlcipher3
        return options
    }

    /// Runs `sql` in the shell after the key; returns its exit status and complaint.
    private func shell(_ path: String, _ sql: String) throws -> (status: Int32, complaint: String) {
        let (status, _, complaint) = try runSQLCipherShellUnchecked(path, "PRAGMA key = \"\(TestKeys.text(named: passphrase))\";\n\(sql)\n")
        return (status, complaint)
    }

    /// Fails unless another process's write to `path` meets a lock.
    private func assertAnotherProcessCannotWrite(_ path: String, line: UInt = #line) throws {
        let (status, complaint) = try shell(path, "BEGIN IMMEDIATE;\nCOMMIT;")
        XCTAssertNotEqual(status, 0, "another process began a write during ours", line: line)
        XCTAssertTrue(complaint.contains("locked"), complaint, line: line)
    }

    func testAConnectionOpenedDuringAWriteKeepsTheWritersLock() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("rollback.db").path
        let queue = try DatabaseQueue(path: path, key: .named(passphrase), options: options)
        try queue.write { db in try db.execute("CREATE TABLE t(x)") }
        try queue.write { db in
            try db.execute("INSERT INTO t VALUES (1)")
            // Another connection to the same file, opened while this transaction holds its lock.
            let other = try Database(path: path, key: .named(passphrase), options: options)
            XCTAssertEqual(try other.fetchScalar(Int.self, "SELECT count(*) FROM t"), 0)
            other.close()
            try assertAnotherProcessCannotWrite(path)
        }
        let (status, complaint) = try shell(path, "BEGIN IMMEDIATE;\nCOMMIT;")
        XCTAssertEqual(status, 0, complaint)
    }

    func testAPoolsReadersKeepItsLockOnTheFile() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("wal.db").path
        let pool = try DatabasePool(path: path, key: .named(passphrase), options: options)
        try pool.write { db in try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        // The first read opens a reader, after the writer holds its lock.
        XCTAssertEqual(try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM t") }, 1)
        // Leaving WAL mode takes the whole file: refused while the pool has it open.
        let (status, complaint) = try shell(path, "PRAGMA journal_mode = DELETE;")
        XCTAssertNotEqual(status, 0, "another process took the file out of WAL mode under the pool")
        XCTAssertTrue(complaint.contains("locked"), complaint)
        try pool.close()
        XCTAssertEqual(try shell(path, "PRAGMA journal_mode = DELETE;").status, 0)
    }

    /// The page reader and the format check read the file itself, during a
    /// write transaction: their descriptors wait for the connection to close.
    func testReadingTheFilesStartDuringAWriteKeepsTheWritersLock() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("reader.db").path
        let queue = try DatabaseQueue(path: path, key: .named(passphrase), options: options)
        try queue.write { db in try db.execute("CREATE TABLE t(x)") }
        try queue.write { db in
            try db.execute("INSERT INTO t VALUES (1)")
            XCTAssertEqual(try FileFormat.detect(at: path), .notPlaintext)
            XCTAssertFalse(EncryptedDatabaseFile.hasPlaintextHeader(at: path))
            let file = try EncryptedDatabaseFile(path: path, key: .named(passphrase), settings: .sqlcipher3)
            XCTAssertTrue(try file.verify().isIntact)
            try assertAnotherProcessCannotWrite(path)
        }
        try queue.close()
        XCTAssertEqual(try shell(path, "BEGIN IMMEDIATE;\nCOMMIT;").status, 0)
    }

    /// A file a connection attached is held as its main file is: reading
    /// its start during a write to it keeps the writer's lock.
    func testReadingAnAttachedFilesStartDuringAWriteKeepsTheWritersLock() throws {
        let dir = try makeTemporaryDirectory(self)
        let main = dir.appendingPathComponent("main.db").path, attached = dir.appendingPathComponent("attached.db").path
        try Database(path: attached, key: .named(passphrase), options: options).execute("CREATE TABLE t(x)")
        let db = try Database(path: main, key: .named(passphrase), options: options)
        try db.execute("ATTACH DATABASE ? AS other KEY ?", [attached, TestKeys.text(named: passphrase)])
        try db.inTransaction(.immediate) { db in
            try db.execute("INSERT INTO other.t VALUES (1)")
            XCTAssertEqual(try FileFormat.detect(at: attached), .notPlaintext)
            try assertAnotherProcessCannotWrite(attached)
        }
        db.close()
        XCTAssertEqual(try shell(attached, "BEGIN IMMEDIATE;\nCOMMIT;").status, 0)
    }

    /// Descriptors kept for a held file are read again, not opened anew:
    /// reading its start a thousand times while a pool holds it leaves the
    /// process's descriptors as they were.
    func testReadingAHeldFileAgainAndAgainOpensNoMoreDescriptors() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("held.db").path
        let pool = try DatabasePool(path: path, key: .named(passphrase), options: options)
        try pool.write { db in try db.execute("CREATE TABLE t(x)") }
        func descriptors() throws -> Int { try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count }
        _ = try FileFormat.detect(at: path)
        let before = try descriptors()
        for _ in 0..<1000 { _ = try FileFormat.detect(at: path) }
        XCTAssertEqual(try descriptors(), before)
        try pool.close()
    }
}
