import CSQLCipher
import Foundation
import XCTest
@testable import DBCrypt

/// SQL functions and collations written in Swift, the raw handle, cursors
/// used like sequences, and decoding errors that name the SQL and column.
final class FunctionsAndCollationsTests: XCTestCase {
    var db: Database!

    override func tearDown() {
        db = nil   // closed with its test: XCTest keeps test cases until the process exits
        super.tearDown()
    }

    override func setUpWithError() throws {
        db = try makeDatabase(self, "functions.db", schema: "CREATE TABLE word(id INTEGER PRIMARY KEY, text TEXT); INSERT INTO word(text) VALUES ('b'), ('B'), ('a'), ('é'), ('c'), (NULL)")
    }

    func testFunctionsTakeAnyArgumentsAndReturnEveryKindOfValue() throws {
        try db.createFunction("reverse", argumentCount: 1, deterministic: true) { arguments in
            guard case let .text(text) = arguments[0] else { return nil }
            return String(text.reversed())
        }
        XCTAssertEqual(try db.fetchScalar(String.self, "SELECT reverse('abc')"), "cba")
        XCTAssertNil(try db.fetchScalar(String.self, "SELECT reverse(NULL)"))
        // A deterministic function can back an index.
        try db.execute("CREATE INDEX by_reverse ON word(reverse(text))")
        XCTAssertEqual(try db.fetchAll(String.self, "SELECT text FROM word WHERE reverse(text) = 'é'"), ["é"])

        try db.createFunction("pack") { arguments in arguments.count }
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT pack()"), 0)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT pack(1, 'two', 3.0, x'04', NULL)"), 5)
        try db.createFunction("echo", argumentCount: 1) { arguments in arguments[0] }
        for value: DatabaseValue in [.null, .integer(Int64.min), .real(-2.5), .text("t\0x"), .text(""), .blob(Data([0, 1])), .blob(Data())] {
            let row = try XCTUnwrap(try db.fetchOne("SELECT echo(?)", [value]))
            XCTAssertEqual(row[0] as DatabaseValue, value)
        }
        // Replacing and removing.
        try db.createFunction("echo", argumentCount: 1) { _ in "replaced" }
        XCTAssertEqual(try db.fetchScalar(String.self, "SELECT echo(1)"), "replaced")
        try db.removeFunction("echo", argumentCount: 1)
        XCTAssertThrowsError(try db.fetchOne("SELECT echo(1)"))
        XCTAssertThrowsError(try db.createFunction("", argumentCount: 1) { _ in nil })
        XCTAssertThrowsError(try db.createFunction("f", argumentCount: 128) { _ in nil })
    }

    func testAnErrorThrownInSwiftIsAnSQLError() throws {
        struct NotAllowed: Error, CustomStringConvertible { var description: String { "not allowed here" } }
        try db.createFunction("guarded", argumentCount: 1) { _ in throw NotAllowed() }
        try db.createFunction("bad_date", argumentCount: 0) { _ in Date(timeIntervalSince1970: .infinity) }
        XCTAssertThrowsError(try db.fetchAll("SELECT guarded(text) FROM word")) { error in
            guard case let .sqlite(code, message, sql)? = error as? DatabaseError else { return XCTFail("got \(error)") }
            XCTAssertEqual(code, SQLITE_ERROR)
            XCTAssertEqual(message, "not allowed here")
            XCTAssertEqual(sql, "SELECT guarded(text) FROM word")
        }
        XCTAssertThrowsError(try db.fetchOne("SELECT bad_date()"))
        // The connection is fine afterwards, and a failing write rolled back.
        XCTAssertThrowsError(try db.execute("INSERT INTO word(text) VALUES (guarded(1))"))
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM word"), 6)
    }

    func testCollationsSortAndCompareWithSwift() throws {
        try db.createCollation("nocase_swift") { a, b in a.lowercased() < b.lowercased() ? .orderedAscending : a.lowercased() == b.lowercased() ? .orderedSame : .orderedDescending }
        XCTAssertEqual(try db.fetchAll(String.self, "SELECT text FROM word WHERE text IS NOT NULL ORDER BY text COLLATE nocase_swift, id"),
                       ["a", "b", "B", "c", "é"])
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM word WHERE text = 'b' COLLATE nocase_swift"), 2)
        try db.execute("CREATE TABLE tag(name TEXT COLLATE nocase_swift UNIQUE)")
        try db.execute("INSERT INTO tag VALUES ('Swift')")
        XCTAssertThrowsError(try db.execute("INSERT INTO tag VALUES ('SWIFT')"))
    }

    func testTheRawHandleReachesWhatDBCryptDoesNotWrap() throws {
        let limit = try db.withSQLiteHandle { handle in sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, -1) }
        XCTAssertGreaterThan(limit, 0)
        let autocommit = try db.withSQLiteHandle { sqlite3_get_autocommit($0) }
        XCTAssertEqual(autocommit, 1)
        db.close()
        XCTAssertThrowsError(try db.withSQLiteHandle { _ in }) { error in
            XCTAssertEqual(error as? DatabaseError, .connectionClosed)
        }
    }

    func testCursorsMapFilterAndStopEarly() throws {
        let texts = try db.query("SELECT text FROM word ORDER BY id").compactMap { row in try row[0] as String? }
        XCTAssertEqual(texts, ["b", "B", "a", "é", "c"])
        XCTAssertEqual(try db.query("SELECT id FROM word").map { try $0[0] as Int }, [1, 2, 3, 4, 5, 6])
        XCTAssertEqual(try db.query("SELECT id FROM word").reduce(0) { $0 + (try $1[0] as Int) }, 21)
        let cursor = try db.query("SELECT id, text FROM word ORDER BY id")
        let firstA = try cursor.first { row in (try row["text"] as String?) == "a" }
        XCTAssertEqual(try firstA?["id"] as Int?, 3)
        XCTAssertEqual(try cursor.next().map { try $0["id"] as Int }, 4, "the cursor went on from where first(where:) stopped")
        XCTAssertTrue(try db.query("SELECT text FROM word").contains { $0[0].isNull })
        // An error while stepping reaches the caller.
        try db.createFunction("fail", argumentCount: 1) { arguments in
            if arguments[0] == .integer(3) { throw DatabaseError.invalidArguments(reason: "three", sql: nil) }
            return 0
        }
        XCTAssertThrowsError(try db.query("SELECT fail(id) FROM word ORDER BY id").map { $0[0] })
    }

    func testDecodingErrorsAreDatabaseErrorsWithTheSQLAndColumn() throws {
        enum Level: Int, Decodable { case low = 1, high = 2 }
        struct Leveled: Decodable { var id: Int; var level: Level }
        struct Texted: Decodable { var id: Int; var text: String }
        struct Checked: Decodable {
            var id: Int
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                id = try container.decode(Int.self, forKey: .id)
                guard id > 0 else { throw DecodingError.dataCorruptedError(forKey: .id, in: container, debugDescription: "secret 42") }
            }
            enum CodingKeys: String, CodingKey { case id }
        }
        let sql = "SELECT id, id + 5 AS level FROM word"
        XCTAssertThrowsError(try db.fetchAll(Leveled.self, sql)) { error in
            XCTAssertEqual(error as? DatabaseError, .decodingFailed(column: "level", type: "Leveled", sql: sql))
            XCTAssertFalse("\(error)".contains("6"), "no value in the message: \(error)")
        }
        XCTAssertThrowsError(try db.fetchAll(Texted.self, "SELECT id, text FROM word ORDER BY id")) { error in
            XCTAssertEqual(error as? DatabaseError, .typeMismatch(
                column: "text", value: "NULL", type: "String", sql: "SELECT id, text FROM word ORDER BY id"))
        }
        XCTAssertThrowsError(try db.fetchOne(Checked.self, "SELECT 0 AS id")) { error in
            XCTAssertEqual(error as? DatabaseError, .decodingFailed(column: "id", type: "Checked", sql: "SELECT 0 AS id"))
            XCTAssertFalse("\(error)".contains("secret"))
        }
        XCTAssertThrowsError(try db.fetchOne(Texted.self, "SELECT id FROM word")) { error in
            XCTAssertEqual(error as? DatabaseError, .columnNotFound(name: "text", sql: "SELECT id FROM word"))
        }
        XCTAssertThrowsError(try db.fetchOne(Int.self, "SELECT text FROM word")) { error in
            XCTAssertEqual(error as? DatabaseError, .typeMismatch(column: "text", value: "text", type: "Int", sql: "SELECT text FROM word"))
        }
    }
}
