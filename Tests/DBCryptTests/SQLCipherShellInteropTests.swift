import Foundation
import XCTest
@testable import DBCrypt

/// Files written by the engine's `sqlcipher` shell open in DBCrypt, and the
/// reverse, with a passphrase and with a raw key, in SQLCipher 3's format
/// (which every shell writes when asked) and in the shell's own defaults.
/// The shell gets its key on standard input, never in its arguments.
final class SQLCipherShellInteropTests: XCTestCase {
    let passphrase = "interop passphrase"
    let rawHex = String(repeating: "0123456789abcdef", count: 4)
    /// SQLCipher 3's format: what Debian 12's 3.4.1 shell reads and writes.
    var sqlcipher3: Database.Options {
        var options = Database.Options()
        options.cipher = .sqlcipher3
        return options
    }

    func testShellDatabaseWithPassphraseOpensInDBCrypt() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("shell.db").path
        try runSQLCipherShell(path, """
            PRAGMA key = '\(passphrase)';
            CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT);
            INSERT INTO t(name) VALUES ('from the shell'), ('second');
            """)
        XCTAssertNotEqual(try fileHeader(path), SQLiteHeader.magic)
        // Tried as SQLCipher 4 first (the default), then as SQLCipher 3.
        let db = try Database(path: path, key: .passphrase(passphrase))
        XCTAssertEqual(db.cipher, .sqlcipher3)
        XCTAssertEqual(try db.fetchAll(String.self, "SELECT name FROM t ORDER BY id"), ["from the shell", "second"])
    }

    func testDBCryptDatabaseWithPassphraseOpensInShell() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("dbcrypt.db").path
        let db = try Database(path: path, key: .passphrase(passphrase), options: sqlcipher3)
        try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)")
        try db.execute("INSERT INTO t(name) VALUES (?)", ["from DBCrypt"])
        db.close()
        let printed = try runSQLCipherShell(path, """
            PRAGMA key = '\(passphrase)';
            SELECT name FROM t;
            PRAGMA integrity_check;
            """)
        XCTAssertEqual(printed, "from DBCrypt\nok\n")
    }

    func testShellDatabaseWithRawKeyOpensInDBCrypt() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("shell-raw.db").path
        try runSQLCipherShell(path, """
            PRAGMA key = "x'\(rawHex)'";
            CREATE TABLE t(x); INSERT INTO t VALUES (42);
            """)
        let db = try Database(path: path, key: DatabaseKey(sqlcipherRawKey: "x'\(rawHex)'"))
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT x FROM t"), 42)
        XCTAssertThrowsError(try Database(path: path, key: .passphrase(rawHex)))
    }

    func testDBCryptDatabaseWithRawKeyOpensInShell() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("dbcrypt-raw.db").path
        let bytes = stride(from: 0, to: rawHex.count, by: 2).map {
            UInt8(rawHex.dropFirst($0).prefix(2), radix: 16)!
        }
        let db = try Database(path: path, key: DatabaseKey(rawKey: bytes), options: sqlcipher3)
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (42)")
        db.close()
        XCTAssertEqual(try runSQLCipherShell(path, "PRAGMA key = \"x'\(rawHex)'\";\nSELECT x FROM t;\n"), "42\n")
    }

    func testCipherSettingsMatchTheShell() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("settings.db").path
        var options = Database.Options()
        options.cipher = CipherSettings(.sqlcipher3, pageSize: 4096, kdfIterations: 10_000)
        let db = try Database(path: path, key: .passphrase(passphrase), options: options)
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('paged')")
        XCTAssertEqual(db.cipher, CipherSettings(.sqlcipher3, pageSize: 4096, kdfIterations: 10_000))
        db.close()
        XCTAssertEqual(try runSQLCipherShell(path, """
            PRAGMA key = '\(passphrase)';
            PRAGMA cipher_page_size = 4096;
            PRAGMA kdf_iter = 10000;
            SELECT x FROM t;
            """), "paged\n")
        // Opened with either format's defaults instead, the same key does not decrypt it.
        XCTAssertThrowsError(try Database(path: path, key: .passphrase(passphrase))) { error in
            XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: path))
        }
    }

    // MARK: - The shell's own defaults

    /// A 4.x shell opens what DBCrypt writes with its defaults (SQLCipher 4)
    /// given the key alone.
    func testTheShellOpensWhatDBCryptWritesGivenTheKeyAlone() throws {
        try skipUnless(shellIsSQLCipher4, "Debian 12's 3.4.1 shell reads SQLCipher 3 files only")
        let path = try makeTemporaryDirectory(self).appendingPathComponent("defaults.db").path
        let db = try Database(path: path, key: .passphrase(passphrase))
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('from DBCrypt')")
        db.close()
        XCTAssertEqual(try runSQLCipherShell(path, """
            PRAGMA key = '\(passphrase)';
            SELECT x FROM t;
            PRAGMA cipher_integrity_check;
            """, defaults: .own), "from DBCrypt\n")
    }

    /// DBCrypt opens what the shell writes with its own defaults, in WAL
    /// mode with commits still in the log: SQLCipher 4 from a 4.x shell,
    /// SQLCipher 3 from 3.4.1's.
    func testDBCryptOpensWhatTheShellWritesWithItsOwnDefaultsInWALMode() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("shell-wal.db").path
        try writeLoggedDatabase(path, key: passphrase, rows: ["two"], defaults: .own)
        let db = try Database(path: path, key: .passphrase(passphrase))
        XCTAssertEqual(db.cipher, shellIsSQLCipher4 ? .sqlcipher4 : .sqlcipher3)
        XCTAssertEqual(try db.fetchAll(String.self, "SELECT a FROM t ORDER BY rowid"), ["zero", "two"])
    }
}
