import DBCrypt
import Foundation
import XCTest

/// Databases with committed transactions still in their `-wal` (a process
/// killed before any checkpoint), met by every command: a wrong key, a log
/// of another database, a damaged frame, a log cut inside its last frame.
/// No command may fold a log into the file unless it wrote and succeeded;
/// a failed one leaves every file in the directory byte for byte as it was.
final class WriteAheadLogCommandTests: XCTestCase {
    var work: URL!

    override func setUpWithError() throws {
        work = try makeTemporaryDirectory(self)
        let migrations = work.appendingPathComponent("Migrations")
        try FileManager.default.createDirectory(at: migrations, withIntermediateDirectories: false)
        try Data("CREATE TABLE x(a);".utf8).write(to: migrations.appendingPathComponent("0001_x.sql"))
    }

    private func path(_ name: String) -> String { work.appendingPathComponent(name).path }

    private func makeLoggedDatabase(_ name: String, rows: [String] = ["one", "two", "three"]) throws {
        try writeLoggedDatabase(path(name), key: keyText, rows: rows)
    }

    /// Runs dbcrypt in the work directory with the test keys.
    private func run(_ arguments: [String]) throws -> Run {
        try dbcrypt(arguments, environment: keyEnvironment, in: work)
    }

    /// What `sql` prints for the rows of t (a table of one column).
    private func rows(_ name: String, key: String = "KEY") throws -> [String] {
        let result = try run(["sql", name, "SELECT a FROM t ORDER BY rowid", "--csv", "--key-env", key])
        XCTAssertEqual(result.status, 0, result.stderr)
        return Array(result.stdout.split(whereSeparator: \.isNewline).dropFirst().map(String.init))
    }

    /// Every command that opens a database, reading or writing.
    private func commands(_ name: String) -> [[String]] {
        [["sql", name, "SELECT count(*) FROM t"], ["check", name], ["info", name], ["decrypt", name, "-o", "out.db"],
         ["rekey", name, "--new-key-env", "OTHER"], ["schema", name, "--dir", "Migrations", "--status"],
         ["schema", name, "--dir", "Migrations"], ["kv", name, "get", "token", "--store-key-env", "STORE"]]
    }

    func testAWrongKeyChangesNoFileBesideALog() throws {
        try makeLoggedDatabase("app.db")
        let before = try snapshotFiles(in: work)
        for command in commands("app.db") {
            let result = try run(command + ["--key-env", "OTHER"])
            XCTAssertEqual(result.status, 3, "\(command): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("The key does not open app.db"), "\(command): \(result.stderr)")
            XCTAssertEqual(try snapshotFiles(in: work), before, "\(command) changed a file (the -shm included)")
        }
        XCTAssertEqual(try rows("app.db"), ["zero", "one", "two", "three"])
    }

    func testCommandsThatReadLeaveTheFileAndItsLog() throws {
        try makeLoggedDatabase("app.db")
        let file = try contents(path("app.db")), log = try contents(path("app.db-wal"))
        for command in [["sql", "app.db", "SELECT count(*) FROM t"], ["check", "app.db"], ["info", "app.db"],
                        ["decrypt", "app.db", "-o", "out.db", "--force"], ["schema", "app.db", "--dir", "Migrations", "--status"]] {
            let result = try run(command + ["--key-env", "KEY"])
            XCTAssertEqual(result.status, 0, "\(command): \(result.stderr)")
            // SQLite rebuilds the log's index (-shm) when it opens a log no
            // other connection has open: it holds no data.
            XCTAssertEqual(try contents(path("app.db")), file, "\(command) wrote the database file")
            XCTAssertEqual(try contents(path("app.db-wal")), log, "\(command) changed the log")
        }
        let exported = try Database(path: path("out.db"))
        XCTAssertEqual(try exported.fetchAll(String.self, "SELECT a FROM t ORDER BY rowid"), ["zero", "one", "two", "three"])
        // A command that writes folds the log in as it closes.
        XCTAssertEqual(try run(["sql", "app.db", "INSERT INTO t VALUES('four')", "--key-env", "KEY"]).status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("app.db-wal")))
        XCTAssertEqual(try rows("app.db"), ["zero", "one", "two", "three", "four"])
    }

    func testALogOfAnotherDatabaseIsRefusedAndKept() throws {
        try makeLoggedDatabase("app.db")
        try makeLoggedDatabase("other.db", rows: ["alien"])   // the same key, its own salt
        try FileManager.default.removeItem(atPath: path("app.db-wal"))
        try FileManager.default.copyItem(atPath: path("other.db-wal"), toPath: path("app.db-wal"))
        try? FileManager.default.removeItem(atPath: path("app.db-shm"))
        let before = try snapshotFiles(in: work)
        for command in commands("app.db") {
            let result = try run(command + ["--key-env", "KEY"])
            XCTAssertEqual(result.status, 4, "\(command): \(result.stderr)")
            if command[0] != "check" {
                XCTAssertTrue(result.stderr.contains("The write-ahead log app.db-wal does not decrypt with the key that opens app.db"),
                              "\(command): \(result.stderr)")
            }
            XCTAssertEqual(try snapshotFiles(in: work), before, "\(command) changed a file (the -shm included)")
        }
        // Moved away, the log leaves the database as it was before it.
        try FileManager.default.removeItem(atPath: path("app.db-wal"))
        XCTAssertEqual(try rows("app.db"), ["zero"])
        XCTAssertEqual(try run(["check", "app.db", "--key-env", "KEY"]).status, 0)
    }

    func testADamagedFrameIsNamedAndItsLogKept() throws {
        try makeLoggedDatabase("app.db")
        // A byte of the first frame's page: SQLite would stop reading there
        // and drop the two commits after it.
        var log = try contents(path("app.db-wal"))
        log[32 + 24 + 100] ^= 0x55
        try log.write(to: URL(fileURLWithPath: path("app.db-wal")))
        let before = try snapshotFiles(in: work)
        for command in commands("app.db") {
            let result = try run(command + ["--key-env", "KEY"])
            XCTAssertEqual(result.status, 4, "\(command): \(result.stderr)")
            XCTAssertTrue((result.stdout + result.stderr).contains(command[0] == "check" ? "WAL frame 0" : "frame 0 is damaged (2 committed transactions"),
                          "\(command): \(result.stdout) \(result.stderr)")
            XCTAssertEqual(try snapshotFiles(in: work), before, "\(command) changed a file (the -shm included)")
        }
        // Accepted by name, the loss happens: the log is read up to the damage.
        let accepted = try run(["sql", "app.db", "PRAGMA wal_checkpoint(TRUNCATE)", "--accept-wal-loss", "--key-env", "KEY"])
        XCTAssertEqual(accepted.status, 0, accepted.stderr)
        XCTAssertEqual(try rows("app.db"), ["zero"])
        XCTAssertEqual(try run(["check", "app.db", "--key-env", "KEY"]).status, 0)
    }

    func testALogCutInsideItsLastFrameIsTheEndOfTheLog() throws {
        try makeLoggedDatabase("app.db")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path("app.db-wal")))
        try handle.truncate(atOffset: try handle.seekToEnd() - 100)
        try handle.close()
        let check = try run(["check", "app.db", "--key-env", "KEY"])
        XCTAssertEqual(check.status, 0, check.stdout + check.stderr)
        XCTAssertEqual(try rows("app.db"), ["zero", "one", "two"])
    }
}
