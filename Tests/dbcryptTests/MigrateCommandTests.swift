import DBCrypt
import Foundation
import XCTest

/// `dbcrypt migrate`.
final class MigrateCommandTests: XCTestCase {
    func testMigratesInPlaceWithAKeyFromTheEnvironment() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        let run = try dbcrypt(["migrate", path, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stderr, "", "no progress bar when stderr is not a terminal")
        XCTAssertTrue(run.stdout.contains("in place"), run.stdout)
        XCTAssertEqual(try FileFormat.detect(at: path), .notPlaintext)
        let db = try Database(path: path, key: testKey)
        XCTAssertEqual(db.cipher, .sqlcipher4)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM note"), 200)
        XCTAssertEqual(try db.fetchScalar(Int.self, "PRAGMA user_version"), 3)
    }

    func testMigratesToAnOutputInTheRequestedFormat() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let output = dir.appendingPathComponent("out.db").path
        try makePlaintextDatabase(path)
        let before = try contents(path)
        let run = try dbcrypt(["migrate", path, "-o", output, "--key-env", "KEY", "--format", "sqlcipher3", "--kdf-iter", "4000"],
                              environment: keyEnvironment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try contents(path), before)
        var options = Database.Options()
        options.cipher = CipherSettings(.sqlcipher3, kdfIterations: 4000)
        XCTAssertEqual(try Database(path: output, key: testKey, options: options)
            .fetchScalar(Int.self, "SELECT count(*) FROM note"), 200)
    }

    func testExistingOutputNeedsForce() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let output = dir.appendingPathComponent("out.db").path
        try makePlaintextDatabase(path)
        try Data("not mine to overwrite".utf8).write(to: URL(fileURLWithPath: output))
        let refused = try dbcrypt(["migrate", path, "-o", output, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("already exists"), refused.stderr)
        XCTAssertEqual(try contents(output), Data("not mine to overwrite".utf8))
        let forced = try dbcrypt(["migrate", path, "-o", output, "--key-env", "KEY", "--force"], environment: keyEnvironment)
        XCTAssertEqual(forced.status, 0, forced.stderr)
        XCTAssertEqual(try FileFormat.detect(at: output), .notPlaintext)
    }

    func testRefusesWhatIsNotAPlaintextDatabase() throws {
        let dir = try makeTemporaryDirectory(self)
        let garbage = dir.appendingPathComponent("garbage.db").path
        try Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 13) }).write(to: URL(fileURLWithPath: garbage))
        let empty = dir.appendingPathComponent("empty.db").path
        XCTAssertTrue(FileManager.default.createFile(atPath: empty, contents: Data()))
        let cases: [(String, Int32, String)] = [
            (garbage, 1, "not a plaintext SQLite database"),
            (empty, 3, "is empty"),
            (dir.path, 1, "is a directory"),
            (dir.appendingPathComponent("missing.db").path, 1, "No database at"),
        ]
        for (path, status, message) in cases {
            let run = try dbcrypt(["migrate", path, "--key-env", "KEY"], environment: keyEnvironment)
            XCTAssertEqual(run.status, status, "\(path): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains(message), run.stderr)
            XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, "one sentence: \(run.stderr)")
        }
    }
}
