import Foundation
import XCTest
@testable import DBCrypt

/// SQLCipher 4 files between DBCrypt (SQLCipher 3.4.1 with DBCrypt's provider)
/// and two implementations we did not write: `sqlcipher3` (SQLCipher 4.x) and
/// `apsw-sqlite3mc` (SQLite3 Multiple Ciphers), from the virtualenv that
/// `make test` sets up. Keys reach the peers through the environment.
final class SQLCipher4InteropTests: XCTestCase {
    let passphrase = "interop v4 passphrase"
    let rawHex = String(repeating: "fedcba9876543210", count: 4)
    var rawKey: DatabaseKey { try! DatabaseKey(sqlcipherRawKey: "x'\(rawHex)'") }

    // MARK: - Peers write, DBCrypt reads

    func testSqlcipher3FilesOpenInDBCrypt() throws {
        let dir = try makeTemporaryDirectory(self)
        for (name, key, dbcryptKey) in [("pass", passphrase, DatabaseKey.passphrase(passphrase)), ("raw", "x'\(rawHex)'", rawKey)] {
            for wal in [false, true] {
                let path = dir.appendingPathComponent("\(name)-\(wal).db").path
                try runPeer(path, key: key, """
                    import sqlcipher3, shutil
                    db = sqlcipher3.connect(path + ('.building' if wal else ''))
                    db.execute(f"PRAGMA key = \\"{key}\\"" if key.startswith("x'") else "PRAGMA key = '" + key + "'")
                    if wal: db.execute('PRAGMA journal_mode = WAL')
                    db.execute('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, b BLOB)')
                    db.executemany('INSERT INTO t(v, b) VALUES (?, ?)', [('row %d' % i, bytes(range(i % 50))) for i in range(500)])
                    db.commit()
                    if wal:
                        db.execute("INSERT INTO t(v) VALUES ('only in the WAL')"); db.commit()
                        shutil.copy(path + '.building', path); shutil.copy(path + '.building-wal', path + '-wal')
                    db.close()
                    """, wal: wal)
                if wal { XCTAssertGreaterThan(SiblingFile.size(of: path + "-wal"), 0) }
                let db = try Database(path: path, key: dbcryptKey)
                XCTAssertEqual(db.cipher, .sqlcipher4)
                XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM t"), wal ? 501 : 500, path)
                XCTAssertEqual(try db.fetchScalar(String.self, "PRAGMA integrity_check"), "ok")
            }
        }
    }

    func testSQLite3MultipleCiphersFilesOpenInDBCrypt() throws {
        let dir = try makeTemporaryDirectory(self)
        for (name, key, dbcryptKey) in [("pass", passphrase, DatabaseKey.passphrase(passphrase)), ("raw", "x'\(rawHex)'", rawKey)] {
            for wal in [false, true] {
                let path = dir.appendingPathComponent("mc-\(name)-\(wal).db").path
                try runPeer(path, key: key, """
                    import apsw, shutil
                    db = apsw.Connection(path + ('.building' if wal else ''))
                    db.execute("PRAGMA cipher = 'sqlcipher'"); db.execute('PRAGMA legacy = 4')
                    db.execute(f"PRAGMA key = \\"{key}\\"" if key.startswith("x'") else "PRAGMA key = '" + key + "'")
                    if wal: db.execute('PRAGMA journal_mode = WAL')
                    db.execute('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)')
                    with db:
                        db.executemany('INSERT INTO t(v) VALUES (?)', [('row %d' % i,) for i in range(500)])
                    if wal:
                        db.execute("INSERT INTO t(v) VALUES ('only in the WAL')")
                        shutil.copy(path + '.building', path); shutil.copy(path + '.building-wal', path + '-wal')
                    db.close()
                    """, wal: wal)
                let db = try Database(path: path, key: dbcryptKey)
                XCTAssertEqual(db.cipher, .sqlcipher4)
                XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM t"), wal ? 501 : 500, path)
                XCTAssertEqual(try db.fetchScalar(String.self, "PRAGMA integrity_check"), "ok")
            }
        }
    }

    // MARK: - DBCrypt writes, peers read

    func testDBCryptSQLCipher4FilesOpenInBothPeers() throws {
        let dir = try makeTemporaryDirectory(self)
        let key = DatabaseKey.passphrase(passphrase)
        var files: [(path: String, key: String, rows: Int)] = []

        // A new database, in WAL mode with frames left un-checkpointed.
        let fresh = dir.appendingPathComponent("fresh.db").path
        var walOptions = Database.Options()
        walOptions.journalMode = .wal
        let db = try Database(path: fresh, key: key, options: walOptions)
        try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        try db.inTransaction { db in for i in 0..<300 { try db.execute("INSERT INTO t(v) VALUES (?)", ["row \(i)"]) } }
        try FileManager.default.copyItem(atPath: fresh, toPath: fresh + ".wal.db")
        try FileManager.default.copyItem(atPath: fresh + "-wal", toPath: fresh + ".wal.db-wal")
        db.close()
        files += [(fresh, passphrase, 300), (fresh + ".wal.db", passphrase, 300)]

        // A raw key.
        let raw = dir.appendingPathComponent("raw.db").path
        let rawDB = try Database(path: raw, key: rawKey)
        try rawDB.execute("CREATE TABLE t(v); INSERT INTO t VALUES ('a'), ('b')")
        rawDB.close()
        files.append((raw, "x'\(rawHex)'", 2))

        // The encrypt routine, and a change of key that converts SQLCipher 3 to 4.
        let plain = dir.appendingPathComponent("plain.db").path
        let plainDB = try Database(path: plain)
        try plainDB.execute("CREATE TABLE t(v); INSERT INTO t VALUES (1), (2), (3)")
        plainDB.close()
        let encrypted = dir.appendingPathComponent("encrypted.db").path
        try DatabaseEncryption.encrypt(plain, to: encrypted, key: key)
        files.append((encrypted, passphrase, 3))
        let converted = dir.appendingPathComponent("converted.db").path
        try DatabaseEncryption.encrypt(plain, to: converted, key: .passphrase("old"), cipher: .sqlcipher3)
        try DatabaseEncryption.changeKey(converted, from: .passphrase("old"), to: key, newCipher: .sqlcipher4)
        files.append((converted, passphrase, 3))

        for file in files {
            let sqlcipher = try runPeer(file.path, key: file.key, """
                import sqlcipher3
                db = sqlcipher3.connect(path)
                db.execute(f"PRAGMA key = \\"{key}\\"" if key.startswith("x'") else "PRAGMA key = '" + key + "'")
                print(db.execute('SELECT count(*) FROM t').fetchone()[0])
                print(db.execute('PRAGMA integrity_check').fetchone()[0])
                print(len(db.execute('PRAGMA cipher_integrity_check').fetchall()))
                """)
            XCTAssertEqual(sqlcipher, "\(file.rows)\nok\n0\n", file.path)
            let mc = try runPeer(file.path, key: file.key, """
                import apsw
                db = apsw.Connection(path)
                db.execute("PRAGMA cipher = 'sqlcipher'"); db.execute('PRAGMA legacy = 4')
                db.execute(f"PRAGMA key = \\"{key}\\"" if key.startswith("x'") else "PRAGMA key = '" + key + "'")
                print(db.execute('SELECT count(*) FROM t').fetchone()[0])
                print(db.execute('PRAGMA integrity_check').fetchone()[0])
                """)
            XCTAssertEqual(mc, "\(file.rows)\nok\n", file.path)
        }
    }

    func testSQLCipher3FilesStillRoundTripWithTheDebianShell() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("v3.db").path
        var options = Database.Options()
        options.cipher = .sqlcipher3
        let db = try Database(path: path, key: .passphrase(passphrase), options: options)
        try db.execute("CREATE TABLE t(v); INSERT INTO t VALUES ('v3')")
        db.close()
        XCTAssertEqual(try runSQLCipherShell(path, "PRAGMA key = '\(passphrase)';\nINSERT INTO t VALUES ('shell');\nSELECT count(*) FROM t;\n"), "2\n")
        XCTAssertEqual(try Database(path: path, key: .passphrase(passphrase)).fetchScalar(Int.self, "SELECT count(*) FROM t"), 2)
    }

    // MARK: - Running a peer

    /// Runs `script` with a peer; it also sees `wal`.
    @discardableResult
    private func runPeer(_ path: String, key: String, _ script: String, wal: Bool = false,
                         file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try TestFixtures.runPeer(path, key: key, "wal = args[0] == '1'\n" + script, arguments: [wal ? "1" : "0"], file: file, line: line)
    }
}
