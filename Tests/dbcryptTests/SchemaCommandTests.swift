import DBCrypt
import Foundation
import XCTest

/// `dbcrypt schema`.
final class SchemaCommandTests: XCTestCase {
    var dir: URL!
    var migrations: String!

    override func setUpWithError() throws {
        dir = try makeTemporaryDirectory(self)
        migrations = dir.appendingPathComponent("Migrations").path
        try FileManager.default.createDirectory(atPath: migrations, withIntermediateDirectories: false)
        try Data("CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT);".utf8)
            .write(to: URL(fileURLWithPath: migrations).appendingPathComponent("0001_create_note.sql"))
        try Data("CREATE INDEX note_by_title ON note(title);".utf8)
            .write(to: URL(fileURLWithPath: migrations).appendingPathComponent("0002_index_titles.sql"))
    }

    func testAppliesPendingMigrationsOneLineEachAndListsStatus() throws {
        let path = dir.appendingPathComponent("app.db").path
        let run = try dbcrypt(["schema", path, "--dir", migrations, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout, "applied 0001_create_note.sql\napplied 0002_index_titles.sql\n")
        XCTAssertEqual(try FileFormat.detect(at: path), .notPlaintext)

        let again = try dbcrypt(["schema", path, "--dir", migrations, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(again.stdout, "up to date: no pending migration\n")

        try Data("ALTER TABLE note ADD COLUMN body TEXT;".utf8)
            .write(to: URL(fileURLWithPath: migrations).appendingPathComponent("0003_add_body.sql"))
        let status = try dbcrypt(["schema", path, "--dir", migrations, "--key-env", "KEY", "--status"], environment: keyEnvironment)
        let lines = status.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 3)
        XCTAssertTrue(lines[0].hasPrefix("0001_create_note  applied 20"), status.stdout)
        XCTAssertEqual(lines[2], "0003_add_body  pending")
        XCTAssertEqual(try Database(path: path, key: testKey).fetchScalar(Int.self, "PRAGMA user_version"), 2)
    }

    /// An empty file (what a plaintext `sql --create` that wrote nothing
    /// leaves) is SQLite's empty database: the migrations make it, as a missing one.
    func testMigratesAnEmptyFileAsANewDatabase() throws {
        let path = dir.appendingPathComponent("empty.db").path
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data()))
        let run = try dbcrypt(["schema", path, "--dir", migrations])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout, "applied 0001_create_note.sql\napplied 0002_index_titles.sql\n")
        XCTAssertEqual(try Database(path: path).fetchScalar(Int.self, "PRAGMA user_version"), 2)
    }

    func testRefusalExitsOneAndChangesNothing() throws {
        let path = dir.appendingPathComponent("app.db").path
        XCTAssertEqual(try dbcrypt(["schema", path, "--dir", migrations, "--key-env", "KEY"], environment: keyEnvironment).status, 0)
        let before = try contents(path)
        try Data("CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT, edited INTEGER);".utf8)
            .write(to: URL(fileURLWithPath: migrations).appendingPathComponent("0001_create_note.sql"))
        let run = try dbcrypt(["schema", path, "--dir", migrations, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderr, "dbcrypt: Migration 1 (0001_create_note.sql) was applied and has changed since: restore it and put the change in a new migration.\n")
        XCTAssertEqual(try contents(path), before)

        let wrongKey = try dbcrypt(["schema", path, "--dir", migrations, "--key-env", "OTHER"], environment: keyEnvironment)
        XCTAssertEqual(wrongKey.status, 3)
        let missingDir = try dbcrypt(["schema", path, "--dir", dir.appendingPathComponent("nope").path, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(missingDir.status, 1)
        XCTAssertTrue(missingDir.stderr.contains("Cannot read the migrations directory"), missingDir.stderr)
        XCTAssertEqual(try contents(path), before)
    }

    func testAHandVersionedDatabaseAdoptsTheMigrationsWithABaseline() throws {
        let path = dir.appendingPathComponent("hand.db").path
        let db = try Database(path: path, key: testKey)
        try db.execute("CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT); PRAGMA user_version = 1")
        db.close()
        let plain = try dbcrypt(["schema", path, "--dir", migrations, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(plain.status, 1, "migration 1 cannot run again on the hand-made table")
        let adopted = try dbcrypt(["schema", path, "--dir", migrations, "--key-env", "KEY", "--baseline-from-user-version"],
                                  environment: keyEnvironment)
        XCTAssertEqual(adopted.status, 0, adopted.stderr)
        XCTAssertEqual(adopted.stdout, "applied 0002_index_titles.sql\n")
    }

    func testStatusOfADamagedDatabaseSaysSoWithExitStatusFour() throws {
        let path = dir.appendingPathComponent("damaged.db").path
        XCTAssertEqual(try dbcrypt(["schema", path, "--dir", migrations, "--key-env", "KEY"], environment: keyEnvironment).status, 0)
        let db = try Database(path: path, key: testKey)
        try db.execute("CREATE TABLE filler(x); INSERT INTO filler SELECT randomblob(3000) FROM (SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4)")
        db.close()
        var bytes = try contents(path)
        bytes[bytes.count - 200] ^= 0xFF   // the last page: its HMAC no longer matches
        try bytes.write(to: URL(fileURLWithPath: path))
        let status = try dbcrypt(["schema", path, "--dir", migrations, "--key-env", "KEY", "--status"], environment: keyEnvironment)
        XCTAssertEqual(status.status, 4, status.stdout + status.stderr)
        XCTAssertTrue(status.stderr.contains("is damaged"), status.stderr)
    }
}
