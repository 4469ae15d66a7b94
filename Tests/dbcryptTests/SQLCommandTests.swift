import DBCrypt
import Foundation
import XCTest

/// `dbcrypt sql`: columns, JSON and CSV that parse back to the rows.
final class SQLCommandTests: XCTestCase {
    var path: String!

    override func setUpWithError() throws {
        path = try makeTemporaryDirectory(self).appendingPathComponent("app.db").path
        try makePlaintextDatabase(path, rows: 5)
        try DatabaseEncryption.migrateInPlace(path, key: testKey)
    }

    func testJSONParsesBackToTheRows() throws {
        let run = try dbcrypt(["sql", path, "--key-env", "KEY", "--json", "SELECT id, title, body, score, NULL AS missing FROM note ORDER BY id"],
                              environment: keyEnvironment)
        XCTAssertEqual(run.status, 0, run.stderr)
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(rows.count, 5)
        XCTAssertEqual(rows[2]["id"] as? Int, 3)
        XCTAssertEqual(rows[2]["title"] as? String, "title, \"quoted\" 2")
        // A blob as the sqlite3 shell writes it in JSON: each byte a code point.
        XCTAssertEqual((rows[2]["body"] as? String).map { $0.unicodeScalars.map(\.value) }, [2, 0, 1])
        XCTAssertEqual(rows[2]["score"] as? Double, 0.5)
        XCTAssertTrue(rows[2]["missing"] is NSNull)
    }

    func testCSVParsesBackToTheRows() throws {
        let run = try dbcrypt(["sql", path, "--key-env", "KEY", "--csv", "SELECT id, title, score FROM note ORDER BY id"],
                              environment: keyEnvironment)
        XCTAssertEqual(run.status, 0, run.stderr)
        let records = parseCSV(run.stdout)
        XCTAssertEqual(records.first, ["id", "title", "score"])
        XCTAssertEqual(records.count, 6)
        XCTAssertEqual(records[3], ["3", "title, \"quoted\" 2", "0.5"])
    }

    /// A real reads back as itself on every engine, in every output (SQLite
    /// before 3.47 writes 15 digits: 0.3 for 0.1 + 0.2).
    func testRealsAreWrittenExactly() throws {
        let select = "SELECT 0.1 + 0.2 AS r, 2.5 AS h, 1e20 AS big"
        for (format, expected) in [(["--csv"], "r,h,big\r\n0.30000000000000004,2.5,1.0e+20\r\n"),
                                   ([], "         r            h     big\n-------------------  ---  -------\n0.30000000000000004  2.5  1.0e+20\n")] {
            let run = try dbcrypt(["sql", path, "--key-env", "KEY"] + format + [select], environment: keyEnvironment)
            XCTAssertEqual(run.stdout, expected, run.stderr)
        }
        // (Foundation's JSONSerialization on Linux reads 0.30000000000000004 as 0.3000000000000001: compared as text.)
        let json = try dbcrypt(["sql", path, "--key-env", "KEY", "--json", select], environment: keyEnvironment)
        XCTAssertEqual(json.stdout, "[{\"r\":0.30000000000000004,\"h\":2.5,\"big\":1.0e+20}]\n", json.stderr)
    }

    /// To a pipe or a file, rows are data: control characters stay as they
    /// are (on a terminal they print as ^[: ShellTerminalTests).
    func testControlCharactersReachAFileAsTheyAre() throws {
        let select = "SELECT 'x' || char(27) || '[2J' || char(13) || 'y' AS e"
        for (format, expected) in [(["--csv"], "e\r\n\"x\u{1B}[2J\ry\"\r\n"), ([], "   e\n-------\nx\u{1B}[2J\ry\n")] {
            let run = try dbcrypt(["sql", path, "--key-env", "KEY"] + format + [select], environment: keyEnvironment)
            XCTAssertEqual(run.stdout, expected, run.stderr)
        }
    }

    /// `--create` that wrote nothing on a plaintext database leaves an
    /// empty file, as sqlite3 does; `--create` again makes the database in
    /// an empty file, plaintext or encrypted.
    func testCreateMakesTheDatabaseInAnEmptyFile() throws {
        let directory = try makeTemporaryDirectory(self)
        let plain = directory.appendingPathComponent("plain.db").path
        XCTAssertEqual(try dbcrypt(["sql", plain, "--create", "SELECT 1"]).status, 0)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: plain)[.size] as? Int, 0)
        XCTAssertEqual(try dbcrypt(["sql", plain, "SELECT 1"]).stderr, "dbcrypt: \(plain) is empty: it is not a database.\n")
        let encrypted = directory.appendingPathComponent("encrypted.db").path
        XCTAssertTrue(FileManager.default.createFile(atPath: encrypted, contents: Data()))
        for (path, key) in [(plain, [String]()), (encrypted, ["--key-env", "KEY"])] {
            let made = try dbcrypt(["sql", path, "--create", "CREATE TABLE t(x); INSERT INTO t VALUES (7)"] + key, environment: keyEnvironment)
            XCTAssertEqual(made.status, 0, made.stderr)
            XCTAssertEqual(try dbcrypt(["sql", path, "--csv", "SELECT x FROM t"] + key, environment: keyEnvironment).stdout, "x\r\n7\r\n", path)
            XCTAssertEqual(try FileFormat.detect(at: path) == .notPlaintext, !key.isEmpty, path)
        }
    }

    func testTableOutputAndScriptsOfSeveralStatements() throws {
        let run = try dbcrypt(["sql", path, "--key-env", "KEY",
                               "INSERT INTO author(name) VALUES ('Linus'); SELECT id, name FROM author ORDER BY id"],
                              environment: keyEnvironment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout, "id  name\n--  -----\n 1  Ada\n 2  Grace\n 3  Linus\n")
    }

    func testSQLErrorsAreOneSentenceAndMissingKeyIsRefused() throws {
        let bad = try dbcrypt(["sql", path, "--key-env", "KEY", "SELECT * FROM nowhere"], environment: keyEnvironment)
        XCTAssertEqual(bad.status, 1)
        XCTAssertEqual(bad.stderr, "dbcrypt: SQLite error 1: no such table: nowhere (in `SELECT * FROM nowhere`).\n")
        let noKey = try dbcrypt(["sql", path, "SELECT 1"])
        XCTAssertEqual(noKey.status, 1)
        XCTAssertTrue(noKey.stderr.contains("No key given"), noKey.stderr)
        XCTAssertEqual(try dbcrypt(["sql", path, "--json", "--csv", "--key-env", "KEY", "SELECT 1"], environment: keyEnvironment).status, 64)
    }

    /// RFC 4180 records: quoted fields may hold commas, quotes and newlines.
    private func parseCSV(_ text: String) -> [[String]] {
        var records: [[String]] = [], record: [String] = [], field = ""
        var quoted = false, previousQuote = false
        for c in text {
            if quoted {
                if c == "\"" { quoted = false; previousQuote = true } else { field.append(c) }
                continue
            }
            switch c {
            case "\"": if previousQuote { field.append("\"") }; quoted = true
            case ",": record.append(field); field = ""
            case "\r\n", "\n": record.append(field); records.append(record); record = []; field = ""
            default: field.append(c)
            }
            previousQuote = false
        }
        if !field.isEmpty || !record.isEmpty { record.append(field); records.append(record) }
        return records
    }

    /// `sql --create --plaintext-header 32 --salt` makes an iOS app's
    /// shared-container database on SQLCipher 4.x, and `sql --salt` queries
    /// it; 3.4.1, which has no such setting, says so and makes no file.
    func testCreatesAndQueriesADatabaseWithAPlaintextHeader() throws {
        let shared = (path as NSString).deletingLastPathComponent + "/shared.db"
        let salt = String(repeating: "3c", count: 16)
        let create = try dbcrypt(["sql", shared, "--create", "--plaintext-header", "32", "--salt", salt, "--key-env", "KEY",
                                  "CREATE TABLE t(x); INSERT INTO t VALUES ('in the clear: only the header')"], environment: keyEnvironment)
        guard try CipherInfo.linked().supports(.plaintextHeaderSize) else {
            XCTAssertEqual(create.status, 1, create.stderr)
            XCTAssertTrue(create.stderr.contains("cipher_plaintext_header_size"), create.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: shared))
            return
        }
        XCTAssertEqual(create.status, 0, create.stderr)
        XCTAssertEqual(try contents(shared).prefix(16), Data("SQLite format 3\u{0}".utf8))
        let query = try dbcrypt(["sql", shared, "--salt", salt, "--key-env", "KEY", "SELECT x FROM t"], environment: keyEnvironment)
        XCTAssertEqual(query.status, 0, query.stderr)
        XCTAssertTrue(query.stdout.contains("only the header"), query.stdout)
        let unsalted = try dbcrypt(["sql", shared, "--key-env", "KEY", "SELECT x FROM t"], environment: keyEnvironment)
        XCTAssertNotEqual(unsalted.status, 0)
        XCTAssertTrue(unsalted.stderr.contains("salt"), unsalted.stderr)
    }
}
