import CSQLCipher
import Foundation
import XCTest
@testable import DBCrypt

/// Opening: the key is applied and checked before the connection is handed
/// out, and every way opening can fail is its own error.
final class DatabaseOpeningTests: XCTestCase {
    let key = DatabaseKey.passphrase("opening-tests passphrase")

    func testEncryptedDatabaseReopensWithItsKeyAndReadsRowsBack() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("notes.db").path
        do {
            let db = try Database(path: path, key: key)
            try db.execute("CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT NOT NULL)")
            for i in 1...100 { try db.execute("INSERT INTO note(title) VALUES (?)", ["note \(i)"]) }
            db.close()
        }
        let db = try Database(path: path, key: key)
        XCTAssertTrue(db.isEncrypted)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM note"), 100)
        XCTAssertEqual(try db.fetchScalar(String.self, "SELECT title FROM note WHERE id = 42"), "note 42")
    }

    func testEncryptedFileHasNoPlaintextHeaderAndHidesItsText() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("secret.db").path
        let marker = "MARKER-7f3a9c-find-me-if-you-can"
        let db = try Database(path: path, key: key)
        try db.execute("CREATE TABLE t(x TEXT)")
        try db.execute("INSERT INTO t VALUES (?)", [String(repeating: marker, count: 50)])
        db.close()

        XCTAssertNotEqual(try fileHeader(path), SQLiteHeader.magic)
        XCTAssertFalse(try file(path, contains: marker))
        XCTAssertFalse(try file(path, contains: "CREATE TABLE"))
        XCTAssertEqual(try FileFormat.detect(at: path), .notPlaintext)

        // The same steps without a key do leave both readable: the check above can fail.
        let plainPath = path + ".plain"
        let plain = try Database(path: plainPath)
        try plain.execute("CREATE TABLE t(x TEXT)")
        try plain.execute("INSERT INTO t VALUES (?)", [marker])
        plain.close()
        XCTAssertEqual(try fileHeader(plainPath), SQLiteHeader.magic)
        XCTAssertTrue(try file(plainPath, contains: marker))
    }

    func testWrongKeyFailsAtOpen() throws {
        let path = try makeEncryptedDatabase()
        XCTAssertThrowsError(try Database(path: path, key: .passphrase("not the key"))) { error in
            XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: path))
            XCTAssertEqual((error as? DatabaseError)?.resultCode, 26)
        }
    }

    func testKeyOnPlaintextFileFailsAtOpen() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("plain.db").path
        try Database(path: path).execute("CREATE TABLE t(x)")
        XCTAssertThrowsError(try Database(path: path, key: key)) { error in
            XCTAssertEqual(error as? DatabaseError, .notEncrypted(path: path))
            XCTAssertTrue("\(error)".contains("not encrypted"))
        }
        // Nothing was written: the file is still plaintext and opens without a key.
        XCTAssertEqual(try fileHeader(path), SQLiteHeader.magic)
        XCTAssertNoThrow(try Database(path: path).fetchAll("SELECT * FROM t"))
    }

    func testNoKeyOnEncryptedFileFailsAtOpen() throws {
        let path = try makeEncryptedDatabase()
        XCTAssertThrowsError(try Database(path: path)) { error in
            XCTAssertEqual(error as? DatabaseError, .keyRequired(path: path))
        }
    }

    func testGarbageFileIsNotADatabaseWithAKey() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("garbage.db").path
        try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try Database(path: path, key: key)) { error in
            XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: path))
        }
    }

    /// A file SQLite finds malformed is damaged, not a wrong key: a truncated
    /// plaintext file, a SQLite header with nothing valid behind it, and an
    /// encrypted file cut short whose export reads the missing pages.
    func testMalformedFilesAreDamaged() throws {
        let dir = try makeTemporaryDirectory(self)
        let plain = dir.appendingPathComponent("plain.db").path
        let db = try Database(path: plain)
        try db.execute("CREATE TABLE t(x); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) INSERT INTO t SELECT randomblob(50) FROM n")
        db.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: plain))
        let truncated = dir.appendingPathComponent("truncated.db").path
        try bytes.prefix(1500).write(to: URL(fileURLWithPath: truncated))
        let headerOnly = dir.appendingPathComponent("header-only.db").path
        try (Data("SQLite format 3\0".utf8) + Data(count: 84)).write(to: URL(fileURLWithPath: headerOnly))
        for path in [truncated, headerOnly] {
            XCTAssertThrowsError(try Database(path: path)) { error in
                guard case DatabaseError.damaged(path, _) = error else { return XCTFail("\(path): \(error)") }
                XCTAssertEqual((error as? DatabaseError)?.resultCode, SQLITE_CORRUPT)
            }
        }

        let encrypted = dir.appendingPathComponent("encrypted.db").path
        try DatabaseEncryption.encrypt(plain, to: encrypted, key: key)
        try Data(contentsOf: URL(fileURLWithPath: encrypted)).prefix(6000).write(to: URL(fileURLWithPath: encrypted))
        XCTAssertThrowsError(try DatabaseEncryption.decrypt(encrypted, key: key, to: dir.appendingPathComponent("out.db").path)) { error in
            guard case DatabaseError.damaged(encrypted, _) = error else { return XCTFail("\(error)") }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.db").path))
    }

    func testMissingFileFailsWhenNotCreating() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("absent.db").path
        var options = Database.Options()
        options.create = false
        XCTAssertThrowsError(try Database(path: path, key: key, options: options)) { error in
            XCTAssertEqual(error as? DatabaseError, .fileNotFound(path: path))
        }
        options = Database.Options()
        options.readOnly = true
        XCTAssertThrowsError(try Database(path: path, options: options)) { error in
            XCTAssertEqual(error as? DatabaseError, .fileNotFound(path: path))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    func testDirectoryFailsAtOpen() throws {
        let path = try makeTemporaryDirectory(self).path
        XCTAssertThrowsError(try Database(path: path, key: key)) { error in
            XCTAssertEqual(error as? DatabaseError, .isDirectory(path: path))
        }
    }

    func testMissingParentDirectoryFailsAtOpen() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("no/such/dir/x.db").path
        XCTAssertThrowsError(try Database(path: path, key: key)) { error in
            guard case .cannotOpen(path, _)? = error as? DatabaseError else {
                return XCTFail("expected cannotOpen, got \(error)")
            }
        }
    }

    func testEmptyKeyIsRefused() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("x.db").path
        XCTAssertThrowsError(try Database(path: path, key: .passphrase(""))) { error in
            guard case .invalidKey? = error as? CipherError else { return XCTFail("got \(error)") }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    func testReadOnlyConnectionRefusesWrites() throws {
        let path = try makeEncryptedDatabase()
        var options = Database.Options()
        options.readOnly = true
        let db = try Database(path: path, key: key, options: options)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM t"), 1)
        XCTAssertThrowsError(try db.execute("INSERT INTO t VALUES (2)")) { error in
            XCTAssertEqual((error as? DatabaseError)?.resultCode, 8) // SQLITE_READONLY
        }
    }

    func testWALModeIsOptIn() throws {
        let path = try makeEncryptedDatabase()
        XCTAssertEqual(try Database(path: path, key: key).fetchScalar(String.self, "PRAGMA journal_mode"), "delete")
        var options = Database.Options()
        options.journalMode = .wal
        let db = try Database(path: path, key: key, options: options)
        XCTAssertEqual(try db.fetchScalar(String.self, "PRAGMA journal_mode"), "wal")
        try db.execute("INSERT INTO t VALUES (2)")
        XCTAssertEqual(try Database(path: path, key: key).fetchScalar(Int.self, "SELECT count(*) FROM t"), 2)
    }

    func testClosedConnectionThrows() throws {
        let db = try Database.inMemory(key: key)
        db.close()
        db.close()
        XCTAssertTrue(db.isClosed)
        XCTAssertThrowsError(try db.execute("SELECT 1")) { error in
            XCTAssertEqual(error as? DatabaseError, .connectionClosed)
        }
    }

    func testEncryptedInMemoryDatabaseWorks() throws {
        let db = try Database.inMemory(key: key)
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)")
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT sum(x) FROM t"), 3)
    }

    private func makeEncryptedDatabase() throws -> String {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("encrypted.db").path
        let db = try Database(path: path, key: key)
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        db.close()
        return path
    }
}
