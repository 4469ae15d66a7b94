import DBCrypt
import Foundation
import XCTest

/// Files `dbcrypt` writes open in the peers, and the peers' files open in `dbcrypt`.
final class CLIInteropTests: XCTestCase {
    func testMigratedDatabaseOpensInSqlcipher3AndSQLite3MultipleCiphers() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        let expected = try dbcrypt(["sql", path, "--csv", "SELECT id, title, hex(body), score FROM note ORDER BY id"]).stdout
        XCTAssertEqual(try dbcrypt(["migrate", path, "--key-env", "KEY"], environment: passphraseEnvironment).status, 0)

        let dump = """
            rows = db.execute('SELECT id, title, hex(body), score FROM note ORDER BY id').fetchall()
            print('id,title,hex(body),score')
            import csv, io
            out = io.StringIO(); w = csv.writer(out, lineterminator='\\r\\n'); w.writerows(rows); print(out.getvalue(), end='')
            """
        let sqlcipher = try runPeer(path, key: realPassphrase, """
            import sqlcipher3
            db = sqlcipher3.connect(path)
            db.execute("PRAGMA key = '" + key + "'")
            """ + "\n" + dump)
        XCTAssertEqual(normalize(sqlcipher), normalize(expected))
        let mc = try runPeer(path, key: realPassphrase, """
            import apsw
            db = apsw.Connection(path)
            db.execute("PRAGMA cipher = 'sqlcipher'"); db.execute('PRAGMA legacy = 4')
            db.execute("PRAGMA key = '" + key + "'")
            """ + "\n" + dump)
        XCTAssertEqual(normalize(mc), normalize(expected))
    }

    func testSQLCipher3FormatOpensInTheDebianShell() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        XCTAssertEqual(try dbcrypt(["migrate", path, "--key-env", "KEY", "--format", "sqlcipher3"], environment: passphraseEnvironment).status, 0)
        XCTAssertEqual(try runSQLCipherShell(path, "PRAGMA key = '\(realPassphrase)';\nSELECT count(*) FROM note;\n"), "200\n")
    }

    func testPeerFilesOfEitherFormatOpenInDBCrypt() throws {
        let dir = try makeTemporaryDirectory(self)
        for (name, legacy) in [("v3.db", 3), ("v4.db", 4)] {
            let path = dir.appendingPathComponent(name).path
            _ = try runPeer(path, key: realPassphrase, """
                import sqlcipher3
                db = sqlcipher3.connect(path)
                db.execute("PRAGMA key = '" + key + "'")
                db.execute('PRAGMA cipher_compatibility = \(legacy)')
                db.execute('CREATE TABLE t(v)'); db.executemany('INSERT INTO t VALUES (?)', [(i,) for i in range(42)])
                db.commit(); db.close()
                """)
            let run = try dbcrypt(["sql", path, "--key-env", "KEY", "SELECT count(*) AS n FROM t"], environment: passphraseEnvironment)
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(run.stdout, "n\n--\n42\n")
            let info = try dbcrypt(["info", path, "--key-env", "KEY"], environment: passphraseEnvironment)
            XCTAssertTrue(info.stdout.contains("format: sqlcipher\(legacy)"), info.stdout)
        }
        let mc = dir.appendingPathComponent("mc.db").path
        _ = try runPeer(mc, key: realPassphrase, """
            import apsw
            db = apsw.Connection(path)
            db.execute("PRAGMA cipher = 'sqlcipher'"); db.execute('PRAGMA legacy = 3')
            db.execute("PRAGMA key = '" + key + "'")
            db.execute('CREATE TABLE t(v)'); db.execute('INSERT INTO t VALUES (1), (2)')
            db.close()
            """)
        XCTAssertEqual(try dbcrypt(["sql", mc, "--key-env", "KEY", "SELECT count(*) AS n FROM t"], environment: passphraseEnvironment).stdout, "n\n-\n2\n")
    }

    /// Python prints reals and line ends its own way: compare field by field.
    private func normalize(_ csv: String) -> [String] {
        csv.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map { field in
                Double(field).map { String($0) } ?? String(field)
            }.joined(separator: ",")
        }
    }
}
