import Foundation
import XCTest
@testable import DBCrypt

/// `Database.Options.exclusiveToThisProcess`: other processes are kept out
/// (Debian's `sqlcipher` shell, and the test helper in a process of its
/// own), while the process's own connections read and write as usual.
final class ExclusiveAccessTests: XCTestCase {
    let passphrase = "exclusive passphrase"
    /// Exclusive, in the SQLCipher 3 format that the shell reads.
    var options: Database.Options {
        var options = Database.Options()
        options.cipher = .sqlcipher3
        options.exclusiveToThisProcess = true
        return options
    }

    /// Runs `sql` in the shell after the key: its exit status, what it printed and its complaint.
    private func shell(_ path: String, _ sql: String) throws -> (status: Int32, printed: String, complaint: String) {
        try runSQLCipherShellUnchecked(path, "PRAGMA key = \"\(TestKeys.text(named: passphrase))\";\n\(sql)\n")
    }

    /// The shell cannot read the file at `path`.
    private func assertLockedOut(_ path: String, line: UInt = #line) throws {
        let locked = try shell(path, "SELECT count(*) FROM t;")
        XCTAssertNotEqual(locked.status, 0, "another process read the file while this one had it", line: line)
        XCTAssertTrue(locked.complaint.contains("locked"), locked.complaint, line: line)
    }

    func testAnExclusivePoolKeepsOtherProcessesOutUntilItCloses() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("excl.db").path
        let pool = try DatabasePool(path: path, key: .named(passphrase), options: options)
        try pool.write { db in try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        XCTAssertEqual(try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM t") }, 1)
        XCTAssertEqual(try pool.unsafeRead { db in try db.fetchScalar(Int.self, "SELECT x FROM t") }, 1)

        try assertLockedOut(path)
        // Not even the shared memory file is there for it to use.
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-shm"))
        // Connections of this process that close keep the lock: the pool's
        // idle readers and checkpointing connection, another connection.
        try pool.releaseMemory()
        try assertLockedOut(path)
        try Database(path: path, key: .named(passphrase), options: options).close()
        try assertLockedOut(path)
        XCTAssertEqual(try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM t") }, 1)

        try pool.close()
        let after = try shell(path, "SELECT count(*) FROM t;")
        XCTAssertEqual(after.status, 0, after.complaint)
        XCTAssertEqual(after.printed, "1\n")
    }

    func testAnExclusivePoolsReadersRefuseWritesAndReadSnapshots() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("excl.db").path
        let pool = try DatabasePool(path: path, key: .named(passphrase), options: options)
        try pool.write { db in try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)") }

        XCTAssertThrowsError(try pool.read { db in try db.execute("INSERT INTO t VALUES (2)") }) { error in
            XCTAssertEqual((error as? DatabaseError)?.resultCode, 8)   // SQLITE_READONLY
        }
        XCTAssertThrowsError(try pool.unsafeRead { db in try db.execute("DELETE FROM t") }) { error in
            XCTAssertEqual((error as? DatabaseError)?.resultCode, 8)
        }

        // A read sees one snapshot while the writer commits beside it; the next read sees the commit.
        let committed = DispatchSemaphore(value: 0)
        let counts = try pool.read { db in
            let before = try db.fetchScalar(Int.self, "SELECT count(*) FROM t")
            DispatchQueue.global().async {
                try? pool.write { db in try db.execute("INSERT INTO t VALUES (2)") }
                committed.signal()
            }
            committed.wait()
            return [before, try db.fetchScalar(Int.self, "SELECT count(*) FROM t")]
        }
        XCTAssertEqual(counts, [1, 1])
        XCTAssertEqual(try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM t") }, 2)
    }

    func testOpeningExclusivelyWaitsForAnotherProcessThenFails() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("shared.db").path
        var plain = options
        plain.exclusiveToThisProcess = false
        let db = try Database(path: path, key: .named(passphrase), options: plain)
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        db.close()

        // The shell holds a read transaction open until its input ends.
        let input = Pipe()
        let child = try ChildProcess(sqlcipherShell, ["-batch", path], standardInput: input.fileHandleForReading, standardError: .discarded)
        let shell = child.process, output = child.outputPipe!
        input.fileHandleForWriting.write(Data("\(shellPrologue()).output /dev/null\nPRAGMA key = \"\(TestKeys.text(named: passphrase))\";\n.output stdout\nBEGIN;\nSELECT count(*) FROM t;\n".utf8))
        XCTAssertEqual(String(decoding: output.fileHandleForReading.availableData, as: UTF8.self), "1\n")

        var exclusive = options
        exclusive.busyTimeout = .milliseconds(200)
        XCTAssertThrowsError(try DatabasePool(path: path, key: .named(passphrase), options: exclusive)) { error in
            XCTAssertEqual(error as? DatabaseError, .databaseInUse(path: path))
        }
        try input.fileHandleForWriting.close()
        shell.waitUntilExit()
        let pool = try DatabasePool(path: path, key: .named(passphrase), options: exclusive)
        XCTAssertEqual(try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM t") }, 1)
    }

    func testEveryConnectionOfTheProcessToTheFileMustBeExclusive() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("excl.db").path
        let link = dir.appendingPathComponent("link.db").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        let exclusive = try Database(path: path, key: .named(passphrase), options: options)
        try exclusive.execute("CREATE TABLE t(x)")
        var plain = options
        plain.exclusiveToThisProcess = false
        for name in [path, link] {
            XCTAssertThrowsError(try Database(path: name, key: .named(passphrase), options: plain)) { error in
                guard case .misuse = error as? DatabaseError else { return XCTFail("\(error)") }
            }
        }
        XCTAssertThrowsError(try DatabaseEncryption.decrypt(path, key: .named(passphrase), to: dir.appendingPathComponent("plain.db").path))
        try assertLockedOut(path)
        exclusive.close()
        XCTAssertEqual(try Database(path: link, key: .named(passphrase), options: plain).fetchScalar(Int.self, "SELECT count(*) FROM t"), 0)
    }

    func testAReadOnlyConnectionCannotBeExclusive() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("excl.db").path
        try Database(path: path, key: .named(passphrase)).execute("CREATE TABLE t(x)")
        var readOnly = options
        readOnly.readOnly = true
        XCTAssertThrowsError(try Database(path: path, key: .named(passphrase), options: readOnly)) { error in
            guard case .misuse = error as? DatabaseError else { return XCTFail("\(error)") }
        }
    }

    /// A process that writes through an exclusive pool is killed mid-way:
    /// while it ran, this process could not open the file; afterwards
    /// every commit it reported is there and the file is intact.
    func testAKilledExclusiveWriterLosesNoCommit() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("killed.db").path
        let child = try startTestHelper(["write-exclusively", path], keys: ["DBCRYPT_TEST_KEY": TestKeys.text(named: passphrase)], output: .captured)
        let helper = child.process, output = child.outputPipe!, errors = child.errorPipe!
        var printed = ""
        var reported = 0
        // Past 1,000 WAL frames: the pool's background checkpoints ran too.
        while reported < 1500 {
            let data = output.fileHandleForReading.availableData
            guard !data.isEmpty else { break }
            printed += String(decoding: data, as: UTF8.self)
            let lines = printed.split(separator: "\n")
            if let last = lines.last(where: { $0.hasPrefix("committed ") }), let n = Int(last.dropFirst(10)) { reported = n }
        }
        XCTAssertGreaterThanOrEqual(reported, 1500, String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self))

        var quick = Database.Options()
        quick.busyTimeout = .milliseconds(100)
        XCTAssertThrowsError(try Database(path: path, key: .named(passphrase), options: quick),
                             "this process opened the file while the helper had it exclusively") { error in
            XCTAssertEqual(error as? DatabaseError, .databaseInUse(path: path))
        }

        kill(helper.processIdentifier, SIGKILL)
        helper.waitUntilExit()
        XCTAssertEqual(helper.terminationReason, .uncaughtSignal)

        let db = try Database(path: path, key: .named(passphrase))
        XCTAssertGreaterThanOrEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM t") ?? 0, reported)
        XCTAssertEqual(try db.fetchScalar(String.self, "PRAGMA integrity_check"), "ok")
    }
}
