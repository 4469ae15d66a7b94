import CSQLCipher
import Foundation
import XCTest
@testable import DBCrypt

private struct Hit: Record, Equatable {
    static let databaseTableName = "hit"
    static let databasePrimaryKey = ["name"]
    var name: String
    var hits: Int
}

/// Lines collected from any thread.
private final class Lines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

/// The SQL of newer SQLites on an encrypted database: JSON, FTS5 (its index
/// encrypted too), window functions, RETURNING, UPSERT, STRICT tables and
/// generated columns. Each test runs wherever the linked SQLite has the
/// feature, and elsewhere (Debian 12's SQLCipher 3.4.1 is SQLite 3.15.2)
/// shows that SQLite refuses it with a clear error, not a wrong answer.
final class ModernSQLTests: XCTestCase {
    let key = DatabaseKey.named("modern sql")

    private func makeQueue() throws -> DatabaseQueue {
        try TestFixtures.makeQueue(try makeTemporaryDirectory(self).appendingPathComponent("modern.db").path, key: key)
    }

    /// Runs `body` when the linked SQLite is `version` or later (as
    /// `sqlite3_libversion_number` counts, 3.38.0 = 3038000) and has the
    /// compile option `option`, if any; otherwise `body` must fail with
    /// SQLite's own error, whose message names what it does not know. (In
    /// `body`, SQL runs outside XCTest's assertions, which would catch its
    /// error.)
    private func onEnginesWith(
        _ feature: String, since version: Int32, option: String? = nil, refusedSaying words: [String],
        file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void
    ) throws {
        var has = sqlite3_libversion_number() >= version
        if has, let option {
            let options = try Database.inMemory().fetchAll(String.self, "PRAGMA compile_options")
            has = options.contains(option)
        }
        if has { return try body() }
        XCTAssertThrowsError(try body(), "\(feature) on SQLite \(String(cString: sqlite3_libversion()))", file: file, line: line) { error in
            guard case let .sqlite(code, message, _)? = error as? DatabaseError else {
                return XCTFail("\(feature): \(error)", file: file, line: line)
            }
            XCTAssertEqual(code & 0xFF, SQLITE_ERROR, message, file: file, line: line)
            XCTAssertTrue(words.contains { message.contains($0) }, "\(feature): \(message)", file: file, line: line)
        }
    }

    func testJSONOperatorsAndJSONEach() throws {
        let queue = try makeQueue()
        try onEnginesWith("JSON ->> and json_each", since: 3_038_000, refusedSaying: ["syntax error", "no such function"]) {
            try queue.write { db in
                try db.execute("CREATE TABLE doc(body TEXT)")
                try db.execute("INSERT INTO doc VALUES (?), (?)", [#"{"name":"ada","tags":["x","y"]}"#, #"{"name":"bob","tags":[]}"#])
                let names = try db.fetchAll(String.self, "SELECT body ->> '$.name' FROM doc ORDER BY 1")
                let tags = try db.fetchAll(String.self, "SELECT value FROM doc, json_each(doc.body, '$.tags') ORDER BY 1")
                XCTAssertEqual(names, ["ada", "bob"])
                XCTAssertEqual(tags, ["x", "y"])
            }
        }
    }

    /// FTS5 finds rows, and neither its text nor its index is readable in the file.
    func testFullTextSearchWithFTS5IsEncryptedToo() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("fts.db").path
        let queue = try DatabaseQueue(path: path, key: key)
        try onEnginesWith("FTS5", since: 3_009_000, option: "ENABLE_FTS5", refusedSaying: ["no such module: fts5"]) {
            try queue.write { db in
                try db.execute("CREATE VIRTUAL TABLE note USING fts5(title, body)")
                try db.execute("INSERT INTO note VALUES ('diary', 'xylophonist quartermaster'), ('list', 'milk and bread')")
                let found = try db.fetchAll(String.self, "SELECT title FROM note WHERE note MATCH 'xylophonist'")
                let indexTables = try db.fetchScalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name = 'note_idx'")
                XCTAssertEqual(found, ["diary"])
                XCTAssertEqual(indexTables, 1)
            }
            try queue.close()
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            XCTAssertNil(bytes.range(of: Data("xylophonist".utf8)), "the text or its index is in the file in plaintext")
            XCTAssertNil(bytes.range(of: Data("quartermaster".utf8)))
        }
    }

    func testWindowFunctions() throws {
        let queue = try makeQueue()
        try onEnginesWith("window functions", since: 3_025_000, refusedSaying: ["syntax error", "near \"(\""]) {
            try queue.write { db in
                try db.execute("CREATE TABLE sale(day INTEGER, amount INTEGER); INSERT INTO sale VALUES (1, 10), (2, 5), (3, 20)")
                let totals = try db.fetchAll(Int.self, "SELECT sum(amount) OVER (ORDER BY day) FROM sale ORDER BY day")
                XCTAssertEqual(totals, [10, 15, 35])
            }
        }
    }

    func testReturningThroughFetchAllAndFetchOne() throws {
        let queue = try makeQueue()
        try onEnginesWith("RETURNING", since: 3_035_000, refusedSaying: ["syntax error"]) {
            try queue.write { db in
                try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT)")
                let ids = try db.fetchAll(Int.self, "INSERT INTO item(name) VALUES ('a'), ('b') RETURNING id")
                let row = try db.fetchOne("UPDATE item SET name = 'c' WHERE id = 2 RETURNING id, name")
                let stored = try db.fetchScalar(String.self, "SELECT name FROM item WHERE id = 2")
                XCTAssertEqual(ids, [1, 2])
                XCTAssertEqual(try row?["name"], .text("c"))
                XCTAssertEqual(stored, "c")
            }
        }
    }

    /// Records use `ON CONFLICT ... DO UPDATE` where SQLite has it, and SQL
    /// may write it directly.
    func testUpsert() throws {
        let queue = try makeQueue()
        try onEnginesWith("UPSERT", since: 3_024_000, refusedSaying: ["syntax error"]) {
            try queue.write { db in
                try db.execute("CREATE TABLE counter(name TEXT PRIMARY KEY, hits INTEGER)")
                for _ in 0..<3 {
                    try db.execute("INSERT INTO counter VALUES ('home', 1) ON CONFLICT(name) DO UPDATE SET hits = hits + 1")
                }
                let hits = try db.fetchScalar(Int.self, "SELECT hits FROM counter")
                XCTAssertEqual(hits, 3)
            }
        }
        // A record's upsert is one `ON CONFLICT` statement wherever SQLite has it.
        let statements = Lines()
        var options = Database.Options()
        options.trace = { statements.append($0) }
        let db = try Database(path: try makeTemporaryDirectory(self).appendingPathComponent("records.db").path, key: key, options: options)
        try db.execute("CREATE TABLE hit(name TEXT PRIMARY KEY, hits INTEGER)")
        var hit = Hit(name: "home", hits: 1)
        try hit.upsert(db)
        hit.hits = 2
        try hit.upsert(db)
        XCTAssertEqual(try Hit.fetchAll(db), [hit])
        XCTAssertEqual(statements.all.contains { $0.contains("ON CONFLICT") }, sqlite3_libversion_number() >= 3_024_000, "\(statements.all)")
    }

    func testStrictTablesAndGeneratedColumns() throws {
        let queue = try makeQueue()
        try onEnginesWith("STRICT tables", since: 3_037_000, refusedSaying: ["unknown table option", "syntax error"]) {
            try queue.write { db in
                try db.execute("CREATE TABLE measure(id INTEGER PRIMARY KEY, value INTEGER) STRICT")
                XCTAssertThrowsError(try db.execute("INSERT INTO measure(value) VALUES ('not a number')"))
            }
        }
        try onEnginesWith("generated columns", since: 3_031_000, refusedSaying: ["syntax error", "near \"AS\""]) {
            try queue.write { db in
                try db.execute("CREATE TABLE box(w INTEGER, h INTEGER, area INTEGER GENERATED ALWAYS AS (w * h) STORED)")
                try db.execute("INSERT INTO box(w, h) VALUES (3, 4)")
                let area = try db.fetchScalar(Int.self, "SELECT area FROM box")
                XCTAssertEqual(area, 12)
            }
        }
    }

    /// Observation sees commits to an FTS5 table, and commits made by
    /// UPSERT and RETURNING statements.
    func testObservationSeesFTS5UpsertAndReturningCommits() async throws {
        let queue = try makeQueue()
        let version = sqlite3_libversion_number()
        let fts5 = try Database.inMemory().fetchAll(String.self, "PRAGMA compile_options").contains("ENABLE_FTS5")
        try skipUnless(version >= 3_035_000 && fts5, "SQLite \(String(cString: sqlite3_libversion())) has no FTS5 and RETURNING (the refusals are tested above)")
        try await queue.write { db in
            try db.execute("CREATE VIRTUAL TABLE note USING fts5(body); CREATE TABLE counter(name TEXT PRIMARY KEY, hits INTEGER)")
        }
        var notes = queue.observeValues { db in try db.fetchAll(String.self, "SELECT body FROM note WHERE note MATCH 'secret'") }
            .makeAsyncIterator()
        var hits = queue.observeValues { db in try db.fetchScalar(Int.self, "SELECT sum(hits) FROM counter") ?? 0 }
            .makeAsyncIterator()
        let firstNotes = try await notes.next()
        let firstHits = try await hits.next()
        XCTAssertEqual(firstNotes, [])
        XCTAssertEqual(firstHits, 0)
        try await queue.write { db in try db.execute("INSERT INTO note VALUES ('a secret note')") }
        let secondNotes = try await notes.next()
        XCTAssertEqual(secondNotes, ["a secret note"])
        try await queue.write { db in
            try db.execute("INSERT INTO counter VALUES ('home', 1) ON CONFLICT(name) DO UPDATE SET hits = hits + 1")
        }
        let secondHits = try await hits.next()
        XCTAssertEqual(secondHits, 1)
        try await queue.write { db in
            _ = try db.fetchAll(Int.self, "INSERT INTO counter VALUES ('home', 1) ON CONFLICT(name) DO UPDATE SET hits = hits + 1 RETURNING hits")
        }
        let thirdHits = try await hits.next()
        XCTAssertEqual(thirdHits, 2)
    }
}
