import CSQLCipher
import Foundation
import XCTest
@testable import DBCrypt

/// What counts as one statement, how failed SQL is quoted, and the bounded
/// statement cache.
final class StatementTextAndCacheTests: XCTestCase {
    var db: Database!

    override func tearDown() {
        db = nil   // closed with its test: XCTest keeps test cases until the process exits
        super.tearDown()
    }

    override func setUpWithError() throws {
        db = try makeDatabase(self, "statements.db", schema: "CREATE TABLE n(id INTEGER PRIMARY KEY, title TEXT); INSERT INTO n(title) VALUES ('a'), ('b')")
    }

    func testTrailingSemicolonsWhitespaceAndCommentsAreNotASecondStatement() throws {
        for sql in ["SELECT * FROM n; -- all", "SELECT * FROM n;;  \n\t", "SELECT * FROM n /* all */ ;",
                    "SELECT * FROM n; /* unterminated", "-- rows\nSELECT * FROM n -- all\n;\n-- done"] {
            XCTAssertEqual(try db.fetchAll(sql).count, 2, sql)
            XCTAssertNoThrow(try db.makeStatement(sql), sql)
        }
        try db.execute("INSERT INTO n(title) VALUES (?); -- with an argument", ["c"])
        try db.execute("UPDATE n SET title = :t WHERE id = 1 /* named */;", ["t": "z"])
        XCTAssertEqual(try db.fetchAll(String.self, "SELECT title FROM n ORDER BY id; -- ordered"), ["z", "b", "c"])
        // A real second statement is still one too many.
        XCTAssertThrowsError(try db.makeStatement("SELECT 1; SELECT 2 -- two"))
        XCTAssertThrowsError(try db.execute("SELECT ?; SELECT 2", [1]))
        XCTAssertThrowsError(try db.makeStatement("-- nothing but a comment"))
    }

    func testANULCharacterInSQLIsAnErrorNotAnEndlessLoop() throws {
        // Found by make fuzz (FuzzSQL): SQLite stops at a NUL without moving on.
        for sql in ["\0\0SELECT 1", "SELECT 1;\0SELECT 2", "SELECT 1 \0"] {
            XCTAssertThrowsError(try db.makeStatement(sql), sql.debugDescription)
            XCTAssertThrowsError(try db.execute(sql), sql.debugDescription)
            XCTAssertThrowsError(try db.executeScript(sql) { _ in }, sql.debugDescription)
        }
    }

    func testASyntaxErrorQuotesTheWholeStatementButNoArguments() throws {
        let sql = "SELECT title FROM n WHERE title = ? ORDER BY BY id"
        XCTAssertThrowsError(try db.fetchAll(sql, ["secret argument"])) { error in
            guard case let .sqlite(code, message, quoted)? = error as? DatabaseError else { return XCTFail("got \(error)") }
            XCTAssertEqual(code, SQLITE_ERROR)
            XCTAssertTrue(message.contains("syntax error"), message)
            XCTAssertEqual(quoted, sql)
            XCTAssertFalse("\(error)".contains("secret argument"))
        }
        // Literals may be keys or private values: errors show their place, not their text.
        XCTAssertThrowsError(try db.execute("INSERT INTO n(title) VALUES ('private note') oops")) { error in
            guard case let .sqlite(_, message, quoted)? = error as? DatabaseError else { return XCTFail("got \(error)") }
            XCTAssertEqual(quoted, "INSERT INTO n(title) VALUES ('<redacted>') oops")
            XCTAssertFalse(message.contains("private"), message)
        }
        XCTAssertThrowsError(try db.execute("SELECT 'private note")) { error in
            XCTAssertFalse("\(error)".contains("private"), "\(error)")
        }
        // Found by make fuzz (FuzzSQL): every error that quotes SQL redacts it.
        for sql in ["ATTACH 'x.db' AS a KEY 'private'; SELECT 1", "ATTACH 'x.db' AS a KEY \"private\" oops"] {
            XCTAssertThrowsError(try db.makeStatement(sql)) { error in
                XCTAssertFalse("\(error)".contains("private"), "\(error)")
            }
        }
        // In a script, the failing statement alone, in full, trigger bodies included.
        let script = """
            CREATE TABLE log(x);
            CREATE TRIGGER t AFTER INSERT ON n BEGIN INSERT INTO log VALUES (new.id); INSERT INTO log VALUES (nope nope); END;
            INSERT INTO n(title) VALUES ('never');
            """
        XCTAssertThrowsError(try db.execute(script)) { error in
            guard case let .sqlite(_, _, quoted)? = error as? DatabaseError else { return XCTFail("got \(error)") }
            XCTAssertEqual(quoted, "CREATE TRIGGER t AFTER INSERT ON n BEGIN INSERT INTO log VALUES (new.id); INSERT INTO log VALUES (nope nope); END;")
        }
    }

    func testThirtyThousandDistinctStatementsKeepSQLiteMemoryBounded() throws {
        func used() -> Int64 { sqlite3_memory_used() }
        // Warm up: the cache fills with statements run twice.
        for i in 0..<200 {
            _ = try db.fetchOne("SELECT title FROM n WHERE id = \(i)")
            _ = try db.fetchOne("SELECT title FROM n WHERE id = \(i)")
        }
        let before = used()
        try db.inTransaction { db in
            for i in 0..<15_000 {
                try db.execute("INSERT INTO n(title) VALUES ('row \(i)')")
                _ = try db.fetchOne("SELECT title FROM n WHERE id = \(i) AND title IS NOT NULL")
            }
        }
        let growth = used() - before
        // 30,000 cached statements cost about 50 MB; the bound keeps 100.
        XCTAssertLessThan(growth, 2_000_000, "SQLite's memory grew by \(growth) bytes")
        XCTAssertLessThanOrEqual(db.cachedStatementCount, 100)
        db.clearStatementCache()
        XCTAssertEqual(db.cachedStatementCount, 0)
    }

    func testTheCacheKeepsRepeatedSQLAndEvictsTheLeastRecentlyUsed() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("small-cache.db").path
        var options = Database.Options()
        options.statementCacheCapacity = 3
        let small = try Database(path: path, options: options)
        func twice(_ sql: String) throws { _ = try small.fetchAll(sql); _ = try small.fetchAll(sql) }
        try twice("SELECT 1")
        try twice("SELECT 2")
        try twice("SELECT 3")
        let one = try small.cachedStatement("SELECT 1")   // now the most recently used
        try twice("SELECT 4")                              // evicts SELECT 2
        XCTAssertEqual(small.cachedStatementCount, 3)
        XCTAssertTrue(one === (try small.cachedStatement("SELECT 1")))
        XCTAssertFalse((try small.cachedStatement("SELECT 2")) === (try small.cachedStatement("SELECT 2")))
        // Capacity 0 keeps nothing.
        options.statementCacheCapacity = 0
        let none = try Database(path: path, options: options)
        for _ in 0..<3 { _ = try none.fetchAll("SELECT 1") }
        XCTAssertEqual(none.cachedStatementCount, 0)
    }

    func testACachedStatementHeldByAnUnsteppedCursorIsNotRebound() throws {
        let sql = "SELECT id FROM n WHERE id > ? ORDER BY id"
        _ = try db.fetchAll(sql, [0])
        _ = try db.fetchAll(sql, [0])                 // now cached
        let first = try db.query(sql, [0])            // bound, not stepped yet
        XCTAssertEqual(try db.fetchAll(sql, [1]).count, 1)
        let second = try db.query(sql, [1])
        XCTAssertEqual(try first.map { try $0[0] as Int }, [1, 2], "the first cursor kept its own arguments")
        XCTAssertEqual(try second.map { try $0[0] as Int }, [2])
    }
}
