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

    /// A rekey (and every routine that writes a new file) keeps WAL mode:
    /// it once turned a WAL database into rollback-journal mode without a
    /// word, and its continuous backup then refused it.
    func testEveryRoutineKeepsWALMode() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let pool = try DatabasePool(path: path, key: testKey)
        try pool.write { db in try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        try pool.close()
        func journalMode(_ path: String, _ key: DatabaseKey?) throws -> String? {
            let db = try Database(path: path, key: key)
            defer { db.close() }
            return try db.fetchScalar(String.self, "PRAGMA journal_mode")
        }
        XCTAssertEqual(try journalMode(path, testKey), "wal")
        let rekeyed = try dbcrypt(["rekey", path, "--key-env", "KEY", "--new-key-env", "OTHER"], environment: keyEnvironment)
        XCTAssertEqual(rekeyed.status, 0, rekeyed.stderr)
        XCTAssertEqual(try journalMode(path, otherKey), "wal")
        let plain = dir.appendingPathComponent("plain.db").path
        XCTAssertEqual(try dbcrypt(["decrypt", path, "-o", plain, "--key-env", "OTHER"], environment: keyEnvironment).status, 0)
        XCTAssertEqual(try journalMode(plain, nil), "wal")
        XCTAssertEqual(try dbcrypt(["migrate", plain, "--key-env", "KEY"], environment: keyEnvironment).status, 0)
        XCTAssertEqual(try journalMode(plain, testKey), "wal")
        let backup = try dbcrypt(["backup", plain, "--continuous", "--once", "-o", dir.appendingPathComponent("history").path,
                                  "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(backup.status, 0, backup.stderr)
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
