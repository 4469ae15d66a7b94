import DBCrypt
import Foundation
import XCTest

/// `dbcrypt decrypt`.
final class DecryptCommandTests: XCTestCase {
    func testDecryptsToAPlaintextCopyEqualToTheOriginal() throws {
        let dir = try makeTemporaryDirectory(self)
        let original = dir.appendingPathComponent("original.db").path
        let path = dir.appendingPathComponent("app.db").path
        let output = dir.appendingPathComponent("plain.db").path
        try makePlaintextDatabase(original)
        try DatabaseEncryption.encrypt(original, to: path, key: testKey)

        let run = try dbcrypt(["decrypt", path, "-o", output, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 0, run.stderr)
        let dump = "SELECT * FROM author; SELECT * FROM note ORDER BY id"
        XCTAssertEqual(try dbcrypt(["sql", output, "--csv", dump]).stdout, try dbcrypt(["sql", original, "--csv", dump]).stdout)
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: output)[.posixPermissions] as? NSNumber)?.intValue, 0o600)
    }

    /// --force replaces an existing output, but not a database another
    /// process has open: its commits would go on into the replaced file.
    func testForceDoesNotReplaceADatabaseInUse() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        try DatabaseEncryption.migrateInPlace(path, key: testKey)
        let live = dir.appendingPathComponent("live.db").path
        let pool = try DatabasePool(path: live)
        try pool.write { db in try db.execute("CREATE TABLE kept(x); INSERT INTO kept VALUES (1)") }
        let refused = try dbcrypt(["decrypt", path, "-o", live, "--force", "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("\(live) is in use (process \(getpid()) "), refused.stderr)
        try pool.write { db in try db.execute("INSERT INTO kept VALUES (2)") }
        XCTAssertEqual(try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM kept") }, 2)
        try pool.close()
        let replaced = try dbcrypt(["decrypt", path, "-o", live, "--force", "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(replaced.status, 0, replaced.stderr)
    }

    func testWrongKeyExitsThreeAndChangesNothing() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        try DatabaseEncryption.migrateInPlace(path, key: testKey)
        let before = try contents(path)
        let output = dir.appendingPathComponent("plain.db").path
        let run = try dbcrypt(["decrypt", path, "-o", output, "--key-env", "OTHER"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 3)
        XCTAssertTrue(run.stderr.contains("does not open"), run.stderr)
        XCTAssertEqual(try contents(path), before)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["app.db"])
    }

    func testOutputIsRequiredAndAPlaintextSourceIsRefused() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        XCTAssertEqual(try dbcrypt(["decrypt", path, "--key-env", "KEY"], environment: keyEnvironment).status, 64)
        let run = try dbcrypt(["decrypt", path, "-o", path + ".out", "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("is not encrypted"), run.stderr)
    }
}
