import DBCrypt
import Foundation
import SQLCipherFormat
import TestFixtures
import XCTest

/// Files written by implementations we did not write, SQLCipher 4.19
/// (`sqlcipher3`) and SQLite3 Multiple Ciphers (`apsw-sqlite3mc`), read
/// without SQLCipher: the settings found, every page authentic, and the
/// plaintext copy holding the rows the peer itself reads.
final class PeerFileTests: XCTestCase {
    /// Writes table `t` (120 rows of text and a 300-byte blob) with SQLCipher
    /// 4.19 after `pragmas`, then prints its rows as the peer reads them back.
    /// With `leaveLog`, the process ends without closing, leaving its last
    /// transactions in the `-wal` file.
    static let sqlcipher3Writer = """
        import sqlcipher3
        db = sqlcipher3.connect(path)
        db.execute("PRAGMA key = '%s'" % key)
        leave_log = args[0] == "leave-log"
        for pragma in args[1:]: db.execute("PRAGMA " + pragma)
        if leave_log:
            db.execute("PRAGMA journal_mode = WAL").fetchall()
            db.execute("PRAGMA wal_autocheckpoint = 0")
        db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, data BLOB)")
        for i in range(1, 121):
            db.execute("INSERT INTO t(name, data) VALUES (?, ?)", ("row %d" % i, bytes((i * j) % 256 for j in range(300))))
            if i % 40 == 0: db.commit()
        db.execute("UPDATE t SET name = 'changed' WHERE id % 7 = 0")
        db.commit()
        for row in db.execute("SELECT id || ' ' || name || ' ' || hex(data) FROM t ORDER BY id"): print(row[0])
        if leave_log:
            import os, sys
            sys.stdout.flush()
            os._exit(0)
        db.close()
        """

    /// The same with SQLite3 Multiple Ciphers' SQLCipher scheme, configured by `pragmas`.
    static let sqlite3mcWriter = """
        import apsw
        db = apsw.Connection(path)
        for pragma in args: db.execute("PRAGMA " + pragma)
        db.execute('PRAGMA key = "%s"' % key)
        db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, data BLOB)")
        with db:
            for i in range(1, 121):
                db.execute("INSERT INTO t(name, data) VALUES (?, ?)", ("row %d" % i, bytes((i * j) % 256 for j in range(300))))
        db.execute("UPDATE t SET name = 'changed' WHERE id % 7 = 0")
        for row in db.execute("SELECT id || ' ' || name || ' ' || hex(data) FROM t ORDER BY id"): print(row[0])
        db.close()
        """

    private func peerFile(_ script: String, _ arguments: [String]) throws -> (path: String, rows: [String]) {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("peer.db").path
        let printed = try runPeer(path, key: fixturePassphrase, script, arguments: arguments)
        return (path, printed.split(separator: "\n").map(String.init))
    }

    /// Reads `path` with the reader, checks every page, decrypts it, and
    /// compares what stock SQLite reads in the copy with the peer's rows.
    @discardableResult
    private func assertDecryptsToPeerRows(_ path: String, _ rows: [String], key: DatabaseKey = .passphrase(fixturePassphrase),
                                          settings: CipherSettings? = nil, salt: [UInt8]? = nil,
                                          file: StaticString = #filePath, line: UInt = #line) throws -> EncryptedDatabaseFile {
        XCTAssertEqual(rows.count, 120, "the peer wrote no rows", file: file, line: line)
        let reader = try EncryptedDatabaseFile(path: path, key: key, settings: settings, salt: salt)
        let report = try reader.verify()
        XCTAssertTrue(report.isIntact, "\(report.damage)", file: file, line: line)
        let plain = path + ".plain"
        _ = try reader.decrypt(to: plain)
        XCTAssertEqual(try rowsThroughStockSQLite(plain), rows, file: file, line: line)
        return reader
    }

    func testSQLCipher419FilesInEveryCompatibilityDecryptToItsRows() throws {
        for version in 1...4 {
            let (path, rows) = try peerFile(Self.sqlcipher3Writer, ["close", "cipher_compatibility = \(version)"])
            let reader = try assertDecryptsToPeerRows(path, rows)
            XCTAssertEqual(reader.settings.standardVersion, version)
            XCTAssertEqual(reader.settings, CipherSettings.standard[4 - version])
        }
    }

    func testSQLCipher419CustomSettingsDecryptToItsRows() throws {
        let (path, rows) = try peerFile(Self.sqlcipher3Writer, [
            "close", "cipher_page_size = 8192", "kdf_iter = 12345", "cipher_kdf_algorithm = PBKDF2_HMAC_SHA256",
            "cipher_hmac_algorithm = HMAC_SHA256",
        ])
        let custom = CipherSettings(.sqlcipher4, pageSize: 8192, kdfIterations: 12345, kdfHash: .sha256, hmacHash: .sha256)
        XCTAssertThrowsError(try EncryptedDatabaseFile(path: path, key: .passphrase(fixturePassphrase)))
        try assertDecryptsToPeerRows(path, rows, settings: custom)
    }

    func testAStandardSetWithAnotherPageSizeIsFoundWithoutBeingGiven() throws {
        let (path, rows) = try peerFile(Self.sqlcipher3Writer, ["close", "cipher_page_size = 16384"])
        let reader = try assertDecryptsToPeerRows(path, rows)
        XCTAssertEqual(reader.settings.effectivePageSize, 16384)
        XCTAssertEqual(reader.settings.standardVersion, 4)
    }

    func testSQLCipher419PlaintextHeaderFilesDecryptWithTheirSalt() throws {
        let salt: [UInt8] = (0..<16).map { UInt8($0 * 11) }
        let hex = salt.map { String(format: "%02x", $0) }.joined()
        let (path, rows) = try peerFile(Self.sqlcipher3Writer, ["close", "cipher_plaintext_header_size = 32", "cipher_salt = \"x'\(hex)'\""])
        let head = try FileHandle(forReadingFrom: URL(fileURLWithPath: path)).read(upToCount: 16)
        XCTAssertEqual(head.map(Array.init), Array("SQLite format 3\u{0}".utf8))
        XCTAssertThrowsError(try EncryptedDatabaseFile(path: path, key: .passphrase(fixturePassphrase))) { error in
            XCTAssertEqual(error as? SQLCipherFormatError, .saltNeeded(path: path))
        }
        let reader = try assertDecryptsToPeerRows(path, rows, salt: salt)
        XCTAssertEqual(reader.settings.plaintextHeaderSize, 32)
    }

    func testASQLCipher419LogIsAppliedAsSQLiteWouldReadIt() throws {
        let (path, rows) = try peerFile(Self.sqlcipher3Writer, ["leave-log"])
        XCTAssertGreaterThan(fileSize(path + "-wal"), 0)
        let reader = try assertDecryptsToPeerRows(path, rows)
        XCTAssertGreaterThan(try reader.verify().walFrameCount, 3)
    }

    func testSQLite3MultipleCiphersFilesInEveryLegacyVersionDecryptToItsRows() throws {
        for version in 1...4 {
            let (path, rows) = try peerFile(Self.sqlite3mcWriter, ["cipher = 'sqlcipher'", "legacy = \(version)"])
            let reader = try assertDecryptsToPeerRows(path, rows)
            XCTAssertEqual(reader.settings.standardVersion, version)
        }
    }

    func testSQLite3MultipleCiphersPlaintextHeaderFilesDecrypt() throws {
        let rawKey: [UInt8] = (0..<32).map { UInt8(255 - $0) }
        let salt: [UInt8] = (0..<16).map { UInt8($0 + 100) }
        let keyText = "x'" + (rawKey + salt).map { String(format: "%02x", $0) }.joined() + "'"
        let path = try makeTemporaryDirectory(self).appendingPathComponent("peer.db").path
        let printed = try runPeer(path, key: keyText, Self.sqlite3mcWriter,
                                  arguments: ["cipher = 'sqlcipher'", "legacy = 4", "plaintext_header_size = 32"])
        let rows = printed.split(separator: "\n").map(String.init)
        try assertDecryptsToPeerRows(path, rows, key: .passphrase(keyText))
    }

    /// A file DBCrypt converts to a plaintext header opens in SQLCipher 4.19
    /// with the header size and the salt, and converted back, in the linked SQLCipher.
    func testAFileConvertedToAPlaintextHeaderOpensInSQLCipher419AndBack() throws {
        let original = try makeDatabase(self, key: .passphrase(fixturePassphrase))
        let expected = try rowsThroughSQLCipher(original, key: .passphrase(fixturePassphrase))
        let standard = try EncryptedDatabaseFile(path: original, key: .passphrase(fixturePassphrase))
        let converted = original + ".header"
        let settings = try standard.convertHeader(to: converted, plaintextHeaderSize: 32)
        XCTAssertEqual(settings.plaintextHeaderSize, 32)
        let head = try FileHandle(forReadingFrom: URL(fileURLWithPath: converted)).read(upToCount: 32)
        XCTAssertEqual(head.map { Array($0.prefix(16)) }, Array("SQLite format 3\u{0}".utf8))
        let hex = standard.salt.map { String(format: "%02x", $0) }.joined()
        let read = try runPeer(converted, key: fixturePassphrase, """
            import sqlcipher3
            db = sqlcipher3.connect(path)
            db.execute("PRAGMA key = '%s'" % key)
            db.execute("PRAGMA cipher_plaintext_header_size = 32")
            db.execute("PRAGMA cipher_salt = \\"x'%s'\\"" % args[0])
            for row in db.execute("SELECT id || ' ' || name || ' ' || hex(data) FROM t ORDER BY id"): print(row[0])
            """, arguments: [hex])
        XCTAssertEqual(read.split(separator: "\n").map(String.init), expected)

        let withHeader = try EncryptedDatabaseFile(path: converted, key: .passphrase(fixturePassphrase), salt: standard.salt)
        XCTAssertEqual(withHeader.settings, settings)
        let back = original + ".back"
        XCTAssertEqual(try withHeader.convertHeader(to: back, plaintextHeaderSize: 0), .sqlcipher4)
        XCTAssertEqual(try rowsThroughSQLCipher(back, key: .passphrase(fixturePassphrase)), expected)
    }
}
