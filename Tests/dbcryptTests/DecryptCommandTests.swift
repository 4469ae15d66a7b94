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
