import DBCrypt
import Foundation
import XCTest

/// `dbcrypt rekey`.
final class RekeyCommandTests: XCTestCase {
    func testChangesTheKeyAndConvertsTheFormat() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        try DatabaseEncryption.migrateInPlace(path, key: testKey, cipher: .sqlcipher3)

        let run = try dbcrypt(["rekey", path, "--key-env", "KEY", "--new-key-env", "OTHER", "--new-format", "sqlcipher4"],
                              environment: keyEnvironment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertThrowsError(try Database(path: path, key: testKey))
        let db = try Database(path: path, key: otherKey)
        XCTAssertEqual(db.cipher, .sqlcipher4)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM note"), 200)
    }

    func testKeepsTheFormatWhenNoneIsGiven() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        try DatabaseEncryption.migrateInPlace(path, key: testKey, cipher: .sqlcipher3)
        XCTAssertEqual(try dbcrypt(["rekey", path, "--key-env", "KEY", "--new-key-env", "OTHER"], environment: keyEnvironment).status, 0)
        XCTAssertEqual(try Database(path: path, key: otherKey).cipher, .sqlcipher3)
    }

    func testWrongCurrentKeyExitsThreeAndChangesNothing() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        try DatabaseEncryption.migrateInPlace(path, key: testKey)
        let before = try contents(path)
        let run = try dbcrypt(["rekey", path, "--key-env", "OTHER", "--new-key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 3, run.stderr)
        XCTAssertEqual(try contents(path), before)
    }

    func testMissingNewKeyOnANonTerminalIsRefused() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        try DatabaseEncryption.migrateInPlace(path, key: testKey)
        let before = try contents(path)
        let run = try dbcrypt(["rekey", path, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("No key given: use --new-key-env or --new-key-file"), run.stderr)
        XCTAssertEqual(try contents(path), before)
    }

    func testAFileWithNonStandardSettingsIsReKeyedWithItsOwnSettingsAndNewOnes() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("odd.db").path
        try makePlaintextDatabase(path)
        let odd = CipherSettings(.sqlcipher4, pageSize: 8192, kdfIterations: 10_000)
        try DatabaseEncryption.migrateInPlace(path, key: testKey, cipher: odd)
        let settings = ["--page-size", "8192", "--kdf-iter", "10000"]
        XCTAssertEqual(try dbcrypt(["check", path, "--key-env", "KEY"] + settings, environment: keyEnvironment).status, 0)

        let kept = try dbcrypt(["rekey", path, "--key-env", "KEY", "--new-key-env", "OTHER"] + settings, environment: keyEnvironment)
        XCTAssertEqual(kept.status, 0, kept.stderr)
        var options = Database.Options()
        options.cipher = odd
        XCTAssertEqual(try Database(path: path, key: otherKey, options: options).cipher, odd, "the settings were kept")
        XCTAssertThrowsError(try Database(path: path, key: otherKey), "a standard format does not open it")

        let changed = try dbcrypt(["rekey", path, "--key-env", "OTHER", "--new-key-env", "KEY", "--new-page-size", "4096",
                                   "--new-kdf-iter", "256000"] + settings, environment: keyEnvironment)
        XCTAssertEqual(changed.status, 0, changed.stderr)
        let db = try Database(path: path, key: testKey)
        XCTAssertEqual(db.cipher, .sqlcipher4, "4096-byte pages and 256,000 iterations: the standard format")
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM note"), 200)
    }
}
