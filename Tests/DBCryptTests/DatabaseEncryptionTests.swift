import CSQLCipher
import Foundation
import XCTest
@testable import DBCrypt

/// The routines on a database with everything an export can lose, in
/// rollback-journal and WAL mode.
final class DatabaseEncryptionTests: XCTestCase {
    let key = DatabaseKey.named("routines key")
    let newKey = DatabaseKey.named("routines new key")

    func testEncryptKeepsSchemaRowsAndHeaderValues() throws {
        for wal in [false, true] {
            let dir = try makeTemporaryDirectory(self)
            let source = dir.appendingPathComponent("plain.db").path
            let destination = dir.appendingPathComponent("encrypted.db").path
            try EncryptionFixture.create(at: source, walFrames: wal)
            if wal { XCTAssertGreaterThan(SiblingFile.size(of: source + "-wal"), 0) }
            let expected = try EncryptionFixture.snapshot(source)
            XCTAssertEqual(expected.contains { $0.contains("last write, only in the WAL") }, wal)

            try DatabaseEncryption.encrypt(source, to: destination, key: key, cipher: .sqlcipher3)

            XCTAssertEqual(try FileFormat.detect(at: destination), .notPlaintext)
            XCTAssertEqual(try EncryptionFixture.snapshot(destination, key: key), expected)
            XCTAssertEqual(try EncryptionFixture.snapshot(source), expected)
            let printed = try runSQLCipherShell(destination, """
                PRAGMA key = \"\(TestKeys.text(named: "routines key"))\";
                SELECT count(*) FROM note;
                PRAGMA user_version;
                PRAGMA application_id;
                PRAGMA integrity_check;
                """)
            XCTAssertEqual(printed, "300\n7\n\(EncryptionFixture.applicationID)\nok\n")
            XCTAssertEqual(try EncryptionFixture.files(in: dir).filter { $0.contains("dbcrypt") }, [])
        }
    }

    func testDecryptKeepsEverythingAndOpensInPlainSQLite() throws {
        for wal in [false, true] {
            let dir = try makeTemporaryDirectory(self)
            let source = dir.appendingPathComponent("encrypted.db").path
            let destination = dir.appendingPathComponent("plain.db").path
            try EncryptionFixture.create(at: source, key: key, walFrames: wal)
            let expected = try EncryptionFixture.snapshot(source, key: key)

            try DatabaseEncryption.decrypt(source, key: key, to: destination)

            XCTAssertEqual(try fileHeader(destination), SQLiteHeader.magic)
            XCTAssertEqual(try EncryptionFixture.snapshot(destination), expected)
            let printed = try runPythonSQLite(destination, """
                print(db.execute('SELECT count(*) FROM note').fetchone()[0])
                print(db.execute('PRAGMA user_version').fetchone()[0])
                print(db.execute('PRAGMA integrity_check').fetchone()[0])
                print(db.execute('SELECT count(*) FROM note_titles').fetchone()[0])
                """)
            XCTAssertEqual(printed, "300\n7\nok\n300\n")
        }
    }

    /// A full-text table without content (FTS4's `content=''`), whose index
    /// SQLite 3.44 and later cannot validate, passes every routine's check:
    /// "unable to validate" is not damage. An index that disagrees with its
    /// content is, where SQLite checks full-text indexes.
    func testAFullTextTableWithoutContentPassesTheChecks() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("app.db").path
        let db = try Database(path: path)
        try db.execute("""
            CREATE VIRTUAL TABLE bare USING fts4(content='', body);
            INSERT INTO bare(docid, body) VALUES (1, 'hello'), (2, 'world');
            CREATE VIRTUAL TABLE notes USING fts4(body);
            INSERT INTO notes(docid, body) VALUES (1, 'hello'), (2, 'world');
            """)
        XCTAssertEqual(try db.integrityProblems(), [])
        db.close()
        try DatabaseEncryption.migrateInPlace(path, key: key)
        try DatabaseEncryption.changeKey(path, from: key, to: newKey)
        XCTAssertTrue(try DatabaseEncryption.check(path, key: newKey).isIntact)
        let encrypted = try Database(path: path, key: newKey)
        defer { encrypted.close() }
        XCTAssertEqual(try encrypted.fetchAll(Int.self, "SELECT docid FROM bare WHERE bare MATCH 'world'"), [2])
        // Where SQLite checks full-text indexes: content that disagrees with the index, and an index that cannot be read.
        let checksIndexes = sqlite3_libversion_number() >= 3_044_000
        try encrypted.execute("UPDATE notes_content SET c0body = 'other' WHERE docid = 1")
        XCTAssertEqual(try encrypted.integrityProblems().isEmpty, !checksIndexes)
        try encrypted.execute("UPDATE notes_content SET c0body = 'hello' WHERE docid = 1")
        XCTAssertEqual(try encrypted.integrityProblems(), [])
        try encrypted.execute("UPDATE notes_segdir SET root = x'0102030405'")
        let unreadable = try encrypted.integrityProblems()
        XCTAssertEqual(unreadable.isEmpty, !checksIndexes, "\(unreadable)")
    }

    func testMigrateInPlaceEncryptsTheSamePath() throws {
        for wal in [false, true] {
            let dir = try makeTemporaryDirectory(self)
            let path = dir.appendingPathComponent("app.db").path
            try EncryptionFixture.create(at: path, walFrames: wal)
            let expected = try EncryptionFixture.snapshot(path)

            try DatabaseEncryption.migrateInPlace(path, key: key, cipher: .sqlcipher3)
            // No WAL, journal or temporary of the old file is left beside the new one.
            XCTAssertEqual(try EncryptionFixture.files(in: dir), ["app.db"])

            XCTAssertEqual(try FileFormat.detect(at: path), .notPlaintext)
            XCTAssertEqual(try EncryptionFixture.snapshot(path, key: key), expected)
            XCTAssertFalse(try file(path, contains: "note number"))
            XCTAssertEqual(try runSQLCipherShell(path, "PRAGMA key = \"\(TestKeys.text(named: "routines key"))\";\nSELECT count(*) FROM audit;\n"),
                           wal ? "301\n" : "300\n")
        }
    }

    func testChangeKeyInPlaceWithNewCipherSettings() throws {
        for wal in [false, true] {
            let dir = try makeTemporaryDirectory(self)
            let path = dir.appendingPathComponent("app.db").path
            try EncryptionFixture.create(at: path, key: key, walFrames: wal)
            let expected = try EncryptionFixture.snapshot(path, key: key)
            let settings = CipherSettings(.sqlcipher3, pageSize: 4096, kdfIterations: 12_000)

            try DatabaseEncryption.changeKey(path, from: key, to: newKey, newCipher: settings)
            XCTAssertEqual(try EncryptionFixture.files(in: dir), ["app.db"])

            XCTAssertThrowsError(try Database(path: path, key: key))
            XCTAssertThrowsError(try Database(path: path, key: newKey))
            XCTAssertEqual(try EncryptionFixture.snapshot(path, key: newKey, cipher: settings), expected)
            XCTAssertEqual(try runSQLCipherShell(path, """
                PRAGMA key = \"\(TestKeys.text(named: "routines new key"))\";
                PRAGMA cipher_page_size = 4096;
                PRAGMA kdf_iter = 12000;
                PRAGMA integrity_check;
                """), "ok\n")
        }
    }

    func testOpenOrUpgradeMigratesPlaintextAndOpensTheRest() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try EncryptionFixture.create(at: path)
        let reports = ProgressLog()
        let db = try DatabaseEncryption.openOrUpgrade(path, key: key) { reports.append($0) }
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM note"), 300)
        XCTAssertEqual(reports.all.last.map { $0.completed == $0.total }, true)
        db.close()
        XCTAssertEqual(try FileFormat.detect(at: path), .notPlaintext)

        // Already encrypted: opened as it is; a wrong key still fails at open.
        XCTAssertFalse(try DatabaseEncryption.upgradeIfNeeded(path, key: key))
        XCTAssertEqual(try DatabaseEncryption.openOrUpgrade(path, key: key).fetchScalar(Int.self, "SELECT count(*) FROM note"), 300)
        XCTAssertThrowsError(try DatabaseEncryption.openOrUpgrade(path, key: newKey)) { error in
            XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: path))
        }
        // Missing: a new encrypted database.
        let fresh = dir.appendingPathComponent("new.db").path
        try DatabaseEncryption.openOrUpgrade(fresh, key: key).execute("CREATE TABLE t(x)")
        XCTAssertEqual(try FileFormat.detect(at: fresh), .notPlaintext)
    }
}

/// Progress reports collected from the routine's thread.
final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var reports: [JobProgress] = []
    func append(_ report: JobProgress) { lock.lock(); reports.append(report); lock.unlock() }
    var all: [JobProgress] { lock.lock(); defer { lock.unlock() }; return reports }
}
