import DBCrypt
import Foundation
import Synchronization
import XCTest

/// `dbcrypt backup`: a copy of a database an app keeps writing.
final class BackupCommandTests: XCTestCase {
    /// An app (a pool in this process) commits rows, each with its tally,
    /// without pause while `dbcrypt backup` copies the database: the copy
    /// is whole and holds one committed state, and the app's commits went on.
    func testBacksUpADatabaseAnAppKeepsWriting() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let copy = dir.appendingPathComponent("copy.db").path
        let pool = try DatabasePool(path: path, key: testKey)
        try pool.write { db in
            try db.execute("""
                CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT);
                CREATE TABLE tally(total INTEGER);
                INSERT INTO tally VALUES (0);
                """)
            for _ in 0..<3_000 { try db.execute("INSERT INTO item(body) VALUES (hex(randomblob(200))); UPDATE tally SET total = total + 1") }
        }
        let stop = Mutex(false), commits = Mutex(0)
        let writer = Thread {
            while !stop.withLock({ $0 }) {
                try? pool.write { db in try db.execute("INSERT INTO item(body) VALUES (hex(randomblob(200))); UPDATE tally SET total = total + 1") }
                commits.withLock { $0 += 1 }
            }
        }
        writer.start()
        assertEventually("the writer did not commit") { commits.withLock { $0 } >= 10 }
        let run = try dbcrypt(["backup", path, "-o", copy, "--key-env", "KEY"], environment: keyEnvironment)
        stop.withLock { $0 = true }
        assertEventually("the writer did not stop") { writer.isFinished }
        // Counted once the writer stopped: a commit in the copy is counted even if its count came late.
        let committedBy = commits.withLock { $0 }

        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout, "Backed up \(path) to \(copy) under its own key.\n")
        let db = try Database(path: copy, key: testKey, options: readOnly)
        defer { db.close() }
        XCTAssertEqual(try db.integrityProblems(), [])
        let rows = try XCTUnwrap(try db.fetchScalar(Int.self, "SELECT count(*) FROM item"))
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT total FROM tally"), rows)
        XCTAssertGreaterThanOrEqual(rows, 3_010)
        XCTAssertLessThanOrEqual(rows, 3_000 + committedBy)
        XCTAssertGreaterThan(try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM item") }!, rows,
                             "the app committed nothing during the backup: the test proves little")
        try pool.close()
    }

    func testAnotherKeyAndFormatOrPlaintextWhenAskedFor() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        try DatabaseEncryption.migrateInPlace(path, key: testKey)
        let copy = dir.appendingPathComponent("copy.db").path

        let other = try dbcrypt(["backup", path, "-o", copy, "--key-env", "KEY", "--new-key-env", "OTHER", "--new-format", "sqlcipher3"],
                                environment: keyEnvironment)
        XCTAssertEqual(other.status, 0, other.stderr)
        var sqlcipher3 = readOnly
        sqlcipher3.cipher = .sqlcipher3
        let copied = try Database(path: copy, key: otherKey, options: sqlcipher3)
        XCTAssertEqual(try copied.fetchScalar(Int.self, "SELECT count(*) FROM note"), 200)
        XCTAssertEqual(copied.cipher?.format, .sqlcipher3)
        copied.close()

        let plain = dir.appendingPathComponent("plain.db").path
        let plaintext = try dbcrypt(["backup", path, "-o", plain, "--key-env", "KEY", "--plaintext"], environment: keyEnvironment)
        XCTAssertEqual(plaintext.status, 0, plaintext.stderr)
        XCTAssertEqual(plaintext.stdout, "Backed up \(path) to \(plain), in plaintext.\n")
        guard case .plaintext = try FileFormat.detect(at: plain) else { return XCTFail("the copy is not plaintext") }
        let plainCopy = try Database(path: plain, options: readOnly)
        XCTAssertEqual(try plainCopy.fetchScalar(Int.self, "SELECT count(*) FROM note"), 200)
        plainCopy.close()
    }

    func testRefusesWhatItCannotDoAndChangesNothing() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        try DatabaseEncryption.migrateInPlace(path, key: testKey)
        let before = try contents(path)
        let copy = dir.appendingPathComponent("copy.db").path

        let both = try dbcrypt(["backup", path, "-o", copy, "--key-env", "KEY", "--plaintext", "--new-key-env", "OTHER"], environment: keyEnvironment)
        XCTAssertEqual(both.status, 64)
        XCTAssertTrue(both.stderr.contains("--plaintext writes a copy without a key"), both.stderr)
        let settingsAlone = try dbcrypt(["backup", path, "-o", copy, "--key-env", "KEY", "--new-format", "sqlcipher3"], environment: keyEnvironment)
        XCTAssertEqual(settingsAlone.status, 64)
        XCTAssertTrue(settingsAlone.stderr.contains("set the settings of a copy with another key"), settingsAlone.stderr)

        try Data("keep me".utf8).write(to: URL(fileURLWithPath: copy))
        let exists = try dbcrypt(["backup", path, "-o", copy, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(exists.status, 1)
        XCTAssertTrue(exists.stderr.contains("--force"), exists.stderr)
        XCTAssertEqual(try contents(copy), Data("keep me".utf8))
        let itself = try dbcrypt(["backup", path, "-o", path, "--key-env", "KEY", "--force"], environment: keyEnvironment)
        XCTAssertEqual(itself.status, 1)
        XCTAssertEqual(try contents(path), before)
        XCTAssertEqual(try dbcrypt(["backup", path, "-o", copy, "--key-env", "KEY", "--force"], environment: keyEnvironment).status, 0)
        XCTAssertEqual(try contents(path), before)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(), ["app.db", "copy.db"])
    }

    /// A WAL database closed (no log beside it): a backup, refused or done,
    /// leaves no empty `-wal` and `-shm` beside it (both did).
    func testAClosedWALDatabaseIsLeftWithoutALog() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let pool = try DatabasePool(path: path, key: testKey)
        try pool.write { db in try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO item(body) VALUES ('one')") }
        try pool.close()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["app.db"], "the pool left its log: the test proves little")
        let copy = dir.appendingPathComponent("copy.db").path
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: copy))
        let refused = try dbcrypt(["backup", path, "-o", copy, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(), ["app.db", "copy.db"])
        let done = try dbcrypt(["backup", path, "-o", copy, "--key-env", "KEY", "--force"], environment: keyEnvironment)
        XCTAssertEqual(done.status, 0, done.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(), ["app.db", "copy.db"])
    }

    /// An output on a read-only file system is said to be one, not a
    /// question of the file's owner and mode (which it was).
    func testAnOutputOnAReadOnlyFileSystemIsNamedSo() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makeQueue(path, key: testKey, schema: "CREATE TABLE t(x)").close()
        let mountPoint = try mountSmallDisk(self, in: dir, size: "1m")
        XCTAssertEqual(try runProgram("/bin/mount", ["-o", "remount,ro", mountPoint.path]).0, 0)
        let run = try dbcrypt(["backup", path, "-o", mountPoint.appendingPathComponent("copy.db").path, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(run.stderr, "dbcrypt: Cannot open \(mountPoint.path): it is on a read-only file system: write elsewhere, or mount it writable.\n")
    }

    private var readOnly: Database.Options {
        var options = Database.Options()
        options.readOnly = true
        return options
    }
}
