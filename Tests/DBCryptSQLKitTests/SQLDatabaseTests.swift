#if SQLKit
import DBCrypt
import DBCryptSQLKit
import Foundation
import SQLKit
import Synchronization
import TestFixtures
import XCTest

/// DBCryptSQLKit on real encrypted files: where statements run, sessions,
/// the dialect of the linked engine, and values in and out.
final class SQLDatabaseTests: XCTestCase {
    private var pool: DatabasePool!
    private var sql: DBCryptSQLDatabase!

    override func setUpWithError() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("sql.db").path
        pool = try DatabasePool(path: path, key: TestKeys.key)
        try pool.write { db in try db.execute("CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT)") }
        sql = pool.sql()
    }

    override func tearDownWithError() throws {
        try pool.close()
    }

    /// A session's statements all run on the writer, in order: a temporary
    /// table (which lives on one connection) made in it is there for its
    /// SELECT; outside a session, a SELECT runs on a reader, which has no
    /// such table.
    func testASessionKeepsItsStatementsOnOneConnection() async throws {
        let count = try await sql.withSession { session in
            try await session.raw("CREATE TEMP TABLE scratch(x)").run()
            try await session.raw("INSERT INTO scratch VALUES (1), (2)").run()
            return try await session.raw("SELECT count(*) AS n FROM scratch").first()?.decode(column: "n", as: Int.self)
        }
        XCTAssertEqual(count, 2)
        do {
            _ = try await sql.raw("SELECT count(*) AS n FROM scratch").all()
            XCTFail("a SELECT outside the session ran on the writer")
        } catch let error as DatabaseError {
            XCTAssertTrue("\(error)".contains("no such table"), "\(error)")
        }
    }

    /// While a session holds a write transaction open across awaits, a
    /// SELECT from another task runs at once, on a reader, and sees the last
    /// commit; another task's write waits for the commit.
    func testSelectsRunBesideAnOpenWriteTransaction() async throws {
        let sql = self.sql!
        try await sql.raw("INSERT INTO note(title) VALUES ('committed')").run()
        try await sql.withSession { session in
            try await session.raw("BEGIN IMMEDIATE").run()
            try await session.raw("INSERT INTO note(title) VALUES ('pending')").run()
            let seen = try await Task.detached { try await sql.raw("SELECT count(*) AS n FROM note").first()?.decode(column: "n", as: Int.self) }.value
            XCTAssertEqual(seen, 1)
            try await session.raw("COMMIT").run()
        }
        let after = try await sql.raw("SELECT count(*) AS n FROM note").first()?.decode(column: "n", as: Int.self)
        XCTAssertEqual(after, 2)
    }

    /// The SQL written follows the engine's SQLite version.
    func testTheDialectFollowsTheEngine() {
        let version = SQLiteVersion.linked
        XCTAssertEqual(sql.serialize(SQLLiteral.boolean(true)).sql, version.isAtLeast(3, 23) ? "TRUE" : "1")
        let dialect = DBCryptSQLiteDialect()
        XCTAssertEqual(dialect.supportsReturning, version.isAtLeast(3, 35))
        XCTAssertEqual(dialect.upsertSyntax, version.isAtLeast(3, 24) ? .standard : .unsupported)
        XCTAssertEqual(dialect.supportsDropColumn, version.isAtLeast(3, 35))
        // Older and newer engines, whatever this one is.
        let old = DBCryptSQLiteDialect(version: SQLiteVersion(number: 3_015_002), hasJSON: false)
        XCTAssertFalse(old.supportsReturning)
        XCTAssertNil(old.nestedSubpathExpression(in: SQLColumn("a"), for: ["b"]))
        let new = DBCryptSQLiteDialect(version: SQLiteVersion(number: 3_046_001), hasJSON: true)
        XCTAssertTrue(new.supportsReturning)
        XCTAssertEqual(SQLiteVersion(number: 3_046_001).stringValue, "3.46.1")
        XCTAssertTrue(SQLiteVersion(number: 3_015_002) < SQLiteVersion(number: 3_046_001))
    }

    private struct Place: Codable, Equatable {
        var city: String
        var floors: [Int]
    }

    private enum Kind: String, Codable { case small, large }

    /// Every kind of value goes in as Fluent's SQLite driver stores it and
    /// comes back equal; a mismatch names the storage class, never the value.
    func testValuesGoInAndComeBackEqual() async throws {
        try await sql.raw("CREATE TABLE item(d, b, u, data, k, place, missing, n)").run()
        let date = Date(timeIntervalSince1970: 1_234_567_890.125)
        let uuid = UUID()
        let place = Place(city: "Nantes", floors: [1, 2])
        try await sql.insert(into: "item").columns("d", "b", "u", "data", "k", "place", "missing", "n")
            .values(SQLBind(date), SQLBind(true), SQLBind(uuid), SQLBind(Data([0, 1, 2])), SQLBind(Kind.large), SQLBind(place),
                    SQLBind(String?.none), SQLBind(Int64.min))
            .run()
        let stored = try await pool.read { db -> [DatabaseValue]? in
            try db.fetchOne("SELECT typeof(d), typeof(b), u, typeof(data), k, place FROM item").map { row in (0..<row.count).map { row[$0] } }
        }
        XCTAssertEqual(stored?[0], .text("real"))
        XCTAssertEqual(stored?[1], .text("integer"))
        XCTAssertEqual(stored?[2], .text(uuid.uuidString))
        XCTAssertEqual(stored?[3], .text("blob"))
        XCTAssertEqual(stored?[4], .text("large"))

        let row = try await XCTUnwrapAsync(try await sql.select().columns("*").from("item").first())
        XCTAssertEqual(try row.decode(column: "d", as: Date.self), date)
        XCTAssertEqual(try row.decode(column: "b", as: Bool.self), true)
        XCTAssertEqual(try row.decode(column: "u", as: UUID.self), uuid)
        XCTAssertEqual(try row.decode(column: "data", as: Data.self), Data([0, 1, 2]))
        XCTAssertEqual(try row.decode(column: "k", as: Kind.self), .large)
        XCTAssertEqual(try row.decode(column: "place", as: Place.self), place)
        XCTAssertEqual(try row.decode(column: "missing", as: String?.self), nil)
        XCTAssertTrue(try row.decodeNil(column: "missing"))
        XCTAssertEqual(try row.decode(column: "n", as: Int64.self), Int64.min)
        XCTAssertThrowsError(try row.decode(column: "u", as: Int.self)) { error in
            XCTAssertFalse("\(error)".contains(uuid.uuidString), "a decoding error shows the value")
        }
        XCTAssertThrowsError(try row.decode(column: "nowhere", as: Int.self)) { error in
            XCTAssertEqual(error as? DatabaseError, .columnNotFound(name: "nowhere", sql: nil))
        }
        XCTAssertThrowsError(try SQLValueEncoder().encode(UInt64.max))
    }

    /// A value that encodes as one value of another type (a wrapper, as
    /// SQLKit's `.model()` makes of each field) is stored as that value, for
    /// every primitive; and is read back through the same single value.
    func testWrappedPrimitivesAreStoredAsThemselves() throws {
        struct Wrapped<T: Codable>: Codable {
            var value: T
            init(_ value: T) { self.value = value }
            init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(T.self) }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(value)
            }
        }
        let encoder = SQLValueEncoder(), decoder = SQLValueDecoder()
        func roundTrip<T: Codable & Equatable>(_ value: T, _ stored: DatabaseValue, file: StaticString = #filePath, line: UInt = #line) throws {
            XCTAssertEqual(try encoder.encode(Wrapped(value)), stored, "\(T.self)", file: file, line: line)
            XCTAssertEqual(try decoder.decode(Wrapped<T>.self, from: stored).value, value, "\(T.self)", file: file, line: line)
        }
        try roundTrip(true, .integer(1))
        try roundTrip("text", .text("text"))
        try roundTrip(1.5, .real(1.5))
        try roundTrip(Float(2.5), .real(2.5))
        try roundTrip(Int(-1), .integer(-1))
        try roundTrip(Int8(-8), .integer(-8))
        try roundTrip(Int16(-16), .integer(-16))
        try roundTrip(Int32(-32), .integer(-32))
        try roundTrip(Int64(-64), .integer(-64))
        try roundTrip(UInt(1), .integer(1))
        try roundTrip(UInt8(8), .integer(8))
        try roundTrip(UInt16(16), .integer(16))
        try roundTrip(UInt32(32), .integer(32))
        try roundTrip(UInt64(64), .integer(64))
        try roundTrip(String?.none, .null)
        // Keyed and unkeyed values, at any depth, are JSON text.
        try roundTrip(["a": [1, 2]], .text(#"{"a":[1,2]}"#))
        try roundTrip([[1], [2, 3]], .text("[[1],[2,3]]"))
        // Read back from what other writers store: a date as ISO 8601 text or integer seconds, a boolean as text.
        XCTAssertEqual(try decoder.decode(Date.self, from: .text("2009-02-13T23:31:30Z")), Date(timeIntervalSince1970: 1_234_567_890))
        XCTAssertEqual(try decoder.decode(Date.self, from: .text("2009-02-13 23:31:30")), Date(timeIntervalSince1970: 1_234_567_890))
        XCTAssertEqual(try decoder.decode(Date.self, from: .integer(1_234_567_890)), Date(timeIntervalSince1970: 1_234_567_890))
        XCTAssertEqual(try decoder.decode(Bool.self, from: .text("false")), false)
        XCTAssertThrowsError(try decoder.decode(Date.self, from: .text("not a date")))
        // Text read as DBCrypt's records read it: the time of a date without
        // a zone (Python's isoformat()) is kept, not dropped, and text
        // after a date is no date.
        for (text, seconds) in [("2009-02-13T23:31:30", 1_234_567_890.0), ("2009-02-13T23:31:30.125", 1_234_567_890.125),
                                ("2009-02-13 23:31", 1_234_567_860), ("2009-02-14T00:31:30+01:00", 1_234_567_890), ("2009-02-13", 1_234_483_200)] {
            XCTAssertEqual(try decoder.decode(Date.self, from: .text(text)), Date(timeIntervalSince1970: seconds), text)
        }
        XCTAssertThrowsError(try decoder.decode(Date.self, from: .text("2009-02-13 junk")))
        XCTAssertThrowsError(try decoder.decode([Int].self, from: .integer(3)))
    }

    /// SQLKit's EventLoopFuture API runs the same statements.
    func testTheFutureAPI() throws {
        let rows = Collected<Int>()
        try sql.execute(sql: SQLRaw("SELECT 7 AS n")) { row in rows.append((try? row.decode(column: "n", as: Int.self)) ?? -1) }.wait()
        XCTAssertEqual(rows.all, [7])
        XCTAssertEqual(sql.version?.stringValue, SQLiteVersion.linked.stringValue)
        XCTAssertEqual(sql.dialect.name, "sqlite")
    }

    /// A queue is an SQLDatabase too: everything on its one connection.
    func testAQueueIsAnSQLDatabase() async throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("queue.db").path
        let queue = try DatabaseQueue(path: path, key: TestKeys.key)
        let sql = queue.sql()
        try await sql.create(table: "t").column("x", type: .int).run()
        try await sql.insert(into: "t").columns("x").values(SQLBind(41)).values(SQLBind(1)).run()
        let sum = try await sql.raw("SELECT sum(x) AS s FROM t").first()?.decode(column: "s", as: Int.self)
        XCTAssertEqual(sum, 42)
        try queue.close()
    }
}

private func XCTUnwrapAsync<T>(_ value: T?, file: StaticString = #filePath, line: UInt = #line) async throws -> T {
    try XCTUnwrap(value, file: file, line: line)
}
#endif
