@testable import DBCryptShell
import DBCrypt
import DBCryptCore
import XCTest

/// Which statements the shell keeps out of its history, and which typed
/// rekeys it follows, in every form SQLite reads.
final class StatementKeyTests: XCTestCase {
    func testStatementsHoldingAKeyAreNeverRecorded() {
        let holding = [
            "PRAGMA key = 'secret';", "pragma KEY='secret'", "PRAGMA main.key = 'secret';", "PRAGMA \"main\".\"rekey\" = 'x';",
            "PRAGMA 'rekey' = 'x';", "PRAGMA [hexkey] = '414243';", "PRAGMA textrekey = 'x';", "PRAGMA key('secret');",
            "PRAGMA /* hidden */ rekey = 'x';", "PRAGMA -- a comment\nkey = 'x';", "ATTACH 'other.db' AS o KEY 'secret';",
            "attach database ? as o\nkey 'secret'", "SELECT 1; PRAGMA hexrekey = '41';",
        ]
        for statement in holding { XCTAssertTrue(ShellHistory.holdsKey(statement), statement) }
        let plain = ["CREATE TABLE t(id INTEGER PRIMARY KEY, k)", "SELECT 'key' AS key FROM t", "PRAGMA table_info(keys)",
                     "CREATE TABLE c(a REFERENCES p(b), FOREIGN KEY (a) REFERENCES p(b))", "PRAGMA foreign_keys = ON"]
        for statement in plain { XCTAssertFalse(ShellHistory.holdsKey(statement), statement) }
    }

    func testTypedRekeysAreFollowedOrRefused() throws {
        let raw = "x'" + String(repeating: "ab", count: 32) + "'"
        XCTAssertEqual(Shell.typedNewKey(in: "PRAGMA rekey = \"\(raw)\";")?.kind, .raw)
        XCTAssertEqual(Shell.typedNewKey(in: "PRAGMA rekey = 'it''s new';")?.kind, .passphrase)
        XCTAssertEqual(Shell.typedNewKey(in: "  pragma main.REKEY('pass') ; -- done")?.kind, .passphrase)
        XCTAssertEqual(Shell.typedNewKey(in: "PRAGMA /* c */ \"textrekey\" = bare_word;")?.kind, .passphrase)
        XCTAssertEqual(secret(Shell.typedNewKey(in: "PRAGMA hexrekey = '70617373';")), Array("pass".utf8))
        XCTAssertEqual(secret(Shell.typedNewKey(in: "PRAGMA rekey = 'a'; -- x'")), Array("a".utf8), "a comment is no part of the key")
        XCTAssertEqual(secret(Shell.typedNewKey(in: "PRAGMA rekey = 'it''s new';")), Array("it's new".utf8))
        // Forms the shell cannot follow: refused before they run.
        for statement in ["PRAGMA rekey = 'a'; SELECT 1;", "PRAGMA hexrekey = 'not hex';", "PRAGMA rekey"] {
            XCTAssertTrue(Shell.changesKey(statement), statement)
            XCTAssertNil(Shell.typedNewKey(in: statement), statement)
        }
        XCTAssertFalse(Shell.changesKey("PRAGMA key = 'x';"))
    }

    private func secret(_ key: DatabaseKey?) -> [UInt8]? {
        key?.secret.withUnsafeBytes { Array($0) }
    }

    func testDotCommandArgumentsAndCSVRecords() throws {
        XCTAssertEqual(try Shell.splitArguments("import 'my file.csv' \"t\\\"x\"  "), ["import", "my file.csv", "t\"x"])
        XCTAssertThrowsError(try Shell.splitArguments("read 'unclosed"))
        var records = CSVRecords(Array("a,\"b,\"\"c\"\"\nd\"\r\n\n1,2".utf8))
        XCTAssertEqual(records.next()?.fields.map { String(decoding: $0, as: UTF8.self) }, ["a", "b,\"c\"\nd"])
        XCTAssertEqual(records.next()?.fields.count, 1)
        XCTAssertEqual(records.next()?.line, 4)
        XCTAssertNil(records.next())
        XCTAssertTrue(Shell.isShadow("docs_content", of: "docs"))
        XCTAssertFalse(Shell.isShadow("docs_meta", of: "docs"))
    }
}
