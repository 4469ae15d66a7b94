import Foundation
import XCTest
@testable import DBCrypt

/// `ATTACH ... KEY` from SQL uses the connection's cipher settings (then the
/// other standard format), so it opens the files DBCrypt writes, and the
/// usual ATTACH + `sqlcipher_export` backup writes DBCrypt's format.
final class AttachTests: XCTestCase {
    let passphrase = "attached"

    private func makeFile(_ name: String, _ cipher: CipherSettings, in dir: URL) throws -> String {
        let path = dir.appendingPathComponent(name).path
        var options = Database.Options()
        options.cipher = cipher
        let db = try Database(path: path, key: .passphrase(passphrase), options: options)
        try db.execute("CREATE TABLE t(x TEXT); INSERT INTO t VALUES ('in \(name)')")
        return path
    }

    func testAttachingFilesOfEitherFormatDBCryptWrote() throws {
        let dir = try makeTemporaryDirectory(self)
        let v4 = try makeFile("v4.db", .sqlcipher4, in: dir)
        let v3 = try makeFile("v3.db", .sqlcipher3, in: dir)
        let main = try Database(path: dir.appendingPathComponent("main.db").path, key: .passphrase("main key"))
        try main.execute("ATTACH DATABASE ? AS a KEY ?", [v4, passphrase])
        try main.execute("ATTACH DATABASE ? AS b KEY ?; -- the other format", [v3, passphrase])
        XCTAssertEqual(try main.fetchAll(String.self, "SELECT x FROM a.t UNION ALL SELECT x FROM b.t"), ["in v4.db", "in v3.db"])
        try main.execute("DETACH DATABASE a; DETACH DATABASE b")
        // Through every path that runs SQL, including a cursor and a script.
        _ = try main.fetchAll("ATTACH DATABASE ? AS c KEY ?", [v4, passphrase])
        try main.executeScript("DETACH DATABASE c; ATTACH DATABASE '\(v4)' AS d KEY '\(passphrase)'") { _ in }
        XCTAssertEqual(try main.fetchScalar(String.self, "SELECT x FROM d.t"), "in v4.db")
        // A wrong key is still SQLite's error 26, and leaves nothing attached.
        XCTAssertThrowsError(try main.execute("ATTACH DATABASE ? AS e KEY ?", [v4, "wrong"])) { error in
            XCTAssertEqual((error as? DatabaseError)?.resultCode, 26)
        }
        XCTAssertEqual(try main.fetchAll("PRAGMA database_list").count, 2)
    }

    func testANewFileCreatedThroughAttachIsInTheConnectionsFormat() throws {
        let dir = try makeTemporaryDirectory(self)
        for cipher in [CipherSettings.sqlcipher4, .sqlcipher3, CipherSettings(.sqlcipher4, pageSize: 8192, kdfIterations: 1000)] {
            var options = Database.Options()
            options.cipher = cipher
            let main = try Database(path: dir.appendingPathComponent("main-\(cipher.effectivePageSize).db").path,
                                    key: .passphrase("main key"), options: options)
            let created = dir.appendingPathComponent("attached-\(cipher.format)-\(cipher.effectivePageSize).db").path
            try main.execute("ATTACH DATABASE ? AS n KEY ?", [created, passphrase])
            try main.execute("CREATE TABLE n.t(x); INSERT INTO n.t VALUES (42); DETACH DATABASE n")
            // Opened with exactly those settings and no fallback.
            options.tryOtherFormat = false
            let reopened = try Database(path: created, key: .passphrase(passphrase), options: options)
            XCTAssertEqual(try reopened.fetchScalar(Int.self, "SELECT x FROM t"), 42, "\(cipher)")
            XCTAssertEqual(SiblingFile.size(of: created) % Int64(cipher.effectivePageSize), 0)
        }
    }

    func testTheAttachExportBackupWritesSQLCipher4ThatSQLCipher4Opens() throws {
        let dir = try makeTemporaryDirectory(self)
        let source = try makeFile("source.db", .sqlcipher4, in: dir)
        let backup = dir.appendingPathComponent("backup.db").path
        let db = try Database(path: source, key: .passphrase(passphrase))
        try db.execute("ATTACH DATABASE ? AS backup KEY ?", [backup, "backup key"])
        _ = try db.fetchOne("SELECT sqlcipher_export('backup')")
        try db.execute("DETACH DATABASE backup")
        // SQLCipher 4.x opens it with nothing but the key: its defaults are the file's.
        let printed = try runPeer(backup, key: "backup key", """
            import sqlcipher3
            db = sqlcipher3.connect(path)
            db.execute("PRAGMA key = '" + key + "'")
            print(db.execute('SELECT x FROM t').fetchone()[0])
            """)
        XCTAssertEqual(printed, "in source.db\n")
    }

    func testAnAttachLeavesSQLCipherDefaultsAsTheyWere() throws {
        let db = try Database.inMemory()
        let before = try db.fetchAll("PRAGMA cipher_default_kdf_iter").map { $0[0] }
        let path = try makeTemporaryDirectory(self).appendingPathComponent("x.db").path
        try db.execute("ATTACH DATABASE ? AS x KEY ?", [path, "k"])
        XCTAssertEqual(try db.fetchAll("PRAGMA cipher_default_kdf_iter").map { $0[0] }, before)
    }

    func testTwoConnectionsAttachingOneNewFileAgreeOnItsSalt() throws {
        let dir = try makeTemporaryDirectory(self)
        let shared = dir.appendingPathComponent("shared.db").path
        let a = try Database.inMemory()
        let b = try Database.inMemory()
        try a.execute("ATTACH DATABASE ? AS s KEY ?", [shared, passphrase])
        try b.execute("ATTACH DATABASE ? AS s KEY ?", [shared, passphrase])
        try a.execute("CREATE TABLE s.t(x); INSERT INTO s.t VALUES ('from a')")
        XCTAssertEqual(try b.fetchScalar(String.self, "SELECT x FROM s.t"), "from a")
    }

    func testAKeyWrittenInAttachOrPragmaIsNotQuotedInErrors() throws {
        let dir = try makeTemporaryDirectory(self)
        let v4 = try makeFile("v4.db", .sqlcipher4, in: dir)
        let db = try Database.inMemory()
        for sql in ["ATTACH DATABASE '\(v4)' AS a KEY 'it''s a secret'", "ATTACH DATABASE '\(v4)' AS a KEY 'it''s a secret' garbage",
                    "PRAGMA key = 'it''s a secret' nonsense", "ATTACH '\(v4)' AS a KEY x'0123456789' oops",
                    // Found by make fuzz (FuzzSQL): SQLite's own message quotes the token.
                    "ATTACH KEY 'it''s a secret' oops", "ATTACH 'x' AS a KEY 'it''s a secret"] {
            XCTAssertThrowsError(try db.execute(sql)) { error in
                let text = "\(error)"
                XCTAssertFalse(text.contains("secret") || text.contains("0123456789"), text)
                XCTAssertTrue(text.contains("'<redacted>'"), text)
            }
        }
    }
}
