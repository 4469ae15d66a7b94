import Foundation
import XCTest
@testable import DBCrypt

/// Queries: cursors, rows by index and name, arguments, Decodable rows,
/// the statement cache.
final class DatabaseFetchingTests: XCTestCase {
    var db: Database!

    override func tearDown() {
        db = nil   // closed with its test: XCTest keeps test cases until the process exits
        super.tearDown()
    }

    override func setUpWithError() throws {
        db = try Database.inMemory(key: .named("fetching"))
        try db.execute("""
            CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT NOT NULL, stars INTEGER, created TEXT);
            INSERT INTO note(title, stars, created) VALUES ('first', 3, '2024-01-01 10:00:00.000');
            INSERT INTO note(title, stars, created) VALUES ('second', NULL, '2024-01-02 10:00:00.000');
            INSERT INTO note(title, stars, created) VALUES ('third', 5, '2024-01-03 10:00:00.000');
            """)
    }

    /// A query's rows learn each key's column from the first row: keys asked
    /// in another order on a later row, names in another case, a key with no
    /// column, and a key asked twice all still read the right column.
    func testDecodableRowsWhoseKeysComeInAnotherOrderOrCase() throws {
        struct Flexible: Decodable, Equatable {
            var id: Int, title: String, stars: Int?, missing: String?
            enum CodingKeys: String, CodingKey { case id, title, stars, missing }
            init(id: Int, title: String, stars: Int?) { (self.id, self.title, self.stars, missing) = (id, title, stars, nil) }
            init(from decoder: any Decoder) throws {
                let row = try decoder.container(keyedBy: CodingKeys.self)
                let id = try row.decode(Int.self, forKey: .id)
                if id % 2 == 0 {
                    title = try row.decode(String.self, forKey: .title)
                    stars = try row.decodeIfPresent(Int.self, forKey: .stars)
                } else {
                    stars = try row.decodeIfPresent(Int.self, forKey: .stars)
                    XCTAssertTrue(row.contains(.title))
                    title = try row.decode(String.self, forKey: .title)
                }
                missing = try row.decodeIfPresent(String.self, forKey: .missing)
                self.id = try row.decode(Int.self, forKey: .id)
            }
        }
        let rows = try db.fetchAll(Flexible.self, "SELECT STARS, Title, ID FROM note ORDER BY id")
        XCTAssertEqual(rows, [Flexible(id: 1, title: "first", stars: 3), Flexible(id: 2, title: "second", stars: nil),
                              Flexible(id: 3, title: "third", stars: 5)])
    }

    /// A query's rows share one keyed container per key type, which reads
    /// the current row: a type that asks for containers of two key types,
    /// and a subclass that decodes through its superclass, read each row's
    /// own values.
    func testDecodableRowsWithTwoKeyTypesAndASuperclass() throws {
        class Base: Decodable {
            let id: Int
            enum CodingKeys: String, CodingKey { case id }
            required init(from decoder: any Decoder) throws {
                id = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .id)
            }
        }
        final class Note: Base {
            let title: String, stars: Int?, sameID: Int
            enum NoteKeys: String, CodingKey { case title, stars }
            enum IDKeys: String, CodingKey { case id }
            required init(from decoder: any Decoder) throws {
                let note = try decoder.container(keyedBy: NoteKeys.self)
                title = try note.decode(String.self, forKey: .title)
                sameID = try decoder.container(keyedBy: IDKeys.self).decode(Int.self, forKey: .id)
                stars = try note.decodeIfPresent(Int.self, forKey: .stars)
                try super.init(from: decoder)
            }
        }
        let notes = try db.fetchAll(Note.self, "SELECT id, title, stars FROM note ORDER BY id")
        XCTAssertEqual(notes.map(\.id), [1, 2, 3])
        XCTAssertEqual(notes.map(\.sameID), [1, 2, 3])
        XCTAssertEqual(notes.map(\.title), ["first", "second", "third"])
        XCTAssertEqual(notes.map(\.stars), [3, nil, 5])
        XCTAssertEqual(try db.fetchOne(Note.self, "SELECT id, title, stars FROM note WHERE id = 2")?.title, "second")
    }

    /// Keys are matched to the columns learned from the first row by their
    /// type and bits (plain enums) or by name (other keys): keys of two enum
    /// types with the same bits, asked for at the same place on different
    /// rows, and struct keys with other names there, read their own columns.
    func testDecodableRowsWithOtherKeysAtOnePlace() throws {
        struct Alternating: Decodable, Equatable {
            var id: Int, first: String, named: String
            enum TitleFirst: CodingKey { case title, id }
            enum IDFirst: CodingKey { case id, title }
            struct Named: CodingKey {
                var stringValue: String
                var intValue: Int? { nil }
                init(stringValue: String) { self.stringValue = stringValue }
                init?(intValue: Int) { nil }
            }
            init(_ id: Int, _ first: String, _ named: String) { (self.id, self.first, self.named) = (id, first, named) }
            init(from decoder: any Decoder) throws {
                id = try decoder.container(keyedBy: Named.self).decode(Int.self, forKey: Named(stringValue: "id"))
                if id % 2 == 0 {
                    first = String(try decoder.container(keyedBy: IDFirst.self).decode(Int.self, forKey: .id))
                } else {
                    first = try decoder.container(keyedBy: TitleFirst.self).decode(String.self, forKey: .title)
                }
                named = try decoder.container(keyedBy: Named.self).decode(String.self, forKey: Named(stringValue: id % 2 == 0 ? "loud" : "title"))
            }
        }
        let rows = try db.fetchAll(Alternating.self, "SELECT id, title, upper(title) AS loud FROM note ORDER BY id")
        XCTAssertEqual(rows, [Alternating(1, "first", "first"), Alternating(2, "2", "SECOND"), Alternating(3, "third", "third")])
    }

    /// A keyed container kept past its query (stored by an `init(from:)`)
    /// throws instead of reading, also while a later query decodes with the
    /// columns object it refers to (they are reused, never freed).
    func testAKeyedContainerKeptPastItsQueryThrows() throws {
        struct Kept: Decodable {
            let id: Int
            enum CodingKeys: String, CodingKey { case id, title }
            init(from decoder: any Decoder) throws {
                let row = try decoder.container(keyedBy: CodingKeys.self)
                id = try row.decode(Int.self, forKey: .id)
                keptContainer = row
            }
        }
        func assertEnded(_ read: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertThrowsError(try read(), file: file, line: line) { error in
                guard case DecodingError.dataCorrupted(let context) = error else { return XCTFail("\(error)", file: file, line: line) }
                XCTAssertTrue(context.debugDescription.contains("after its query ended"), context.debugDescription, file: file, line: line)
            }
        }
        XCTAssertEqual(try db.fetchAll(Kept.self, "SELECT id, title FROM note ORDER BY id").map(\.id), [1, 2, 3])
        let kept = try XCTUnwrap(keptContainer as? KeyedDecodingContainer<Kept.CodingKeys>)
        assertEnded { _ = try kept.decode(Int.self, forKey: .id) }
        assertEnded { _ = try kept.decode(String.self, forKey: .title) }
        assertEnded { _ = try kept.decodeIfPresent(Int.self, forKey: .id) }
        assertEnded { _ = try kept.decodeNil(forKey: .title) }
        assertEnded { _ = try kept.decode(Date.self, forKey: .title) }
        assertEnded { _ = try kept.superDecoder() }
        XCTAssertFalse(kept.contains(.id))
        XCTAssertEqual(kept.allKeys.count, 0)

        struct Later: Decodable {
            let id: Int
            enum CodingKeys: String, CodingKey { case id, title }
            init(from decoder: any Decoder) throws {
                id = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .id)
                let old = try XCTUnwrap(keptContainer as? KeyedDecodingContainer<Kept.CodingKeys>)
                XCTAssertThrowsError(try old.decode(Int.self, forKey: .id), "read row \(id) of a later query")
            }
        }
        XCTAssertEqual(try db.fetchAll(Later.self, "SELECT id, title FROM note ORDER BY id DESC").map(\.id), [3, 2, 1])

        // A cursor's query ends with its last row, though the cursor lives on:
        // its statement may then serve another query of the same SQL.
        let sql = "SELECT id, title FROM note WHERE id = ?"
        let cursor = try db.fetchCursor(Kept.self, sql, [1])
        XCTAssertEqual(try cursor.next()?.id, 1)
        let fromCursor = try XCTUnwrap(keptContainer as? KeyedDecodingContainer<Kept.CodingKeys>)
        XCTAssertEqual(try fromCursor.decode(Int.self, forKey: .id), 1)
        XCTAssertNil(try cursor.next())
        let other = try db.cachedStatement(sql).query([2])
        XCTAssertEqual(try other.next()?[0] as Int?, 2)
        assertEnded { _ = try fromCursor.decode(Int.self, forKey: .id) }
        XCTAssertNil(try cursor.next())
        keptContainer = nil
    }

    /// `fetchCursor` decodes one row per `next()`, as `fetchAll` decodes
    /// them: a row that does not decode throws when it is reached, and the
    /// cursor goes on; its errors name the SQL.
    func testDecodedCursorReadsOneRowAtATime() throws {
        struct Note: Decodable, Equatable { var id: Int, title: String, stars: Int? }
        let sql = "SELECT id, CASE id WHEN 2 THEN NULL ELSE title END AS title, stars FROM note ORDER BY id"
        let notes = try db.fetchCursor(Note.self, sql)
        XCTAssertEqual(notes.columnNames, ["id", "title", "stars"])
        XCTAssertEqual(try notes.next(), Note(id: 1, title: "first", stars: 3))
        XCTAssertThrowsError(try notes.next())
        XCTAssertEqual(try notes.map(\.title), ["third"])
        XCTAssertNil(try notes.next())
        XCTAssertEqual(try db.fetchCursor(Note.self, "SELECT id, title, stars FROM note").reduce(0) { $0 + $1.id }, 6)
        let bad = try db.fetchCursor(Note.self, "SELECT id, stars FROM note")
        XCTAssertThrowsError(try bad.next()) { error in
            guard case DatabaseError.columnNotFound(let name, let sql) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(name, "title")
            XCTAssertEqual(sql, "SELECT id, stars FROM note")
        }
    }

    func testCursorIsLazyAndReadsColumnsByIndexAndName() throws {
        let cursor = try db.query("SELECT id, title AS Title, stars FROM note ORDER BY id")
        XCTAssertEqual(cursor.columnNames, ["id", "Title", "stars"])
        var titles: [String] = []
        while let row = try cursor.next() {
            titles.append(try row["title"])   // names ignore case, as in SQL
            XCTAssertEqual(try row[0] as Int, titles.count)
            XCTAssertEqual(try row["Title"] as String, titles.last)
        }
        XCTAssertEqual(titles, ["first", "second", "third"])
        XCTAssertNil(try cursor.next())
    }

    func testMissingColumnIsAnError() throws {
        let row = try XCTUnwrap(try db.fetchOne("SELECT id FROM note"))
        XCTAssertThrowsError(try row["nope"]) { error in
            guard case .columnNotFound(name: "nope", sql: "SELECT id FROM note")? = error as? DatabaseError else {
                return XCTFail("got \(error)")
            }
        }
    }

    func testPositionalAndNamedArguments() throws {
        XCTAssertEqual(try db.fetchScalar(String.self, "SELECT title FROM note WHERE stars = ? AND id > ?", [5, 1]), "third")
        XCTAssertEqual(try db.fetchScalar(String.self, "SELECT title FROM note WHERE stars = :s", ["s": 3]), "first")
        XCTAssertEqual(try db.fetchScalar(String.self, "SELECT title FROM note WHERE stars = @s", [":s": 3]), "first")
        XCTAssertEqual(try db.fetchScalar(String.self, "SELECT title FROM note WHERE id = ?2 OR id = ?1", [0, 2]), "second")
        XCTAssertThrowsError(try db.fetchAll("SELECT * FROM note WHERE id = ?", [1, 2])) { error in
            guard case .invalidArguments? = error as? DatabaseError else { return XCTFail("got \(error)") }
        }
        XCTAssertThrowsError(try db.fetchAll("SELECT * FROM note WHERE id = :id", ["other": 1])) { error in
            guard case .invalidArguments? = error as? DatabaseError else { return XCTFail("got \(error)") }
        }
    }

    func testArgumentsAreBoundNotSpliced() throws {
        let hostile = "x'); DROP TABLE note; --"
        try db.execute("INSERT INTO note(title) VALUES (?)", [hostile])
        XCTAssertEqual(try db.fetchScalar(String.self, "SELECT title FROM note WHERE id = ?", [db.lastInsertRowID]), hostile)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM note"), 4)
    }

    func testDecodableRows() throws {
        enum Mood: String, Decodable { case first, second, third }
        struct Note: Decodable, Equatable {
            var id: Int
            var title: String
            var stars: Int?
            var created: Date
        }
        struct Titled: Decodable { var title: Mood }
        let notes = try db.fetchAll(Note.self, "SELECT * FROM note ORDER BY id")
        XCTAssertEqual(notes.map(\.title), ["first", "second", "third"])
        XCTAssertEqual(notes.map(\.stars), [3, nil, 5])
        XCTAssertEqual(notes[0].created, SQLDateFormat.date(from: "2024-01-01 10:00:00"))
        XCTAssertEqual(try db.fetchOne(Titled.self, "SELECT title FROM note WHERE id = 2")?.title, .second)
        XCTAssertEqual(try db.fetchAll(Int.self, "SELECT id FROM note ORDER BY id DESC"), [3, 2, 1])
        XCTAssertNil(try db.fetchOne(Note.self, "SELECT * FROM note WHERE id = 99"))
        XCTAssertThrowsError(try db.fetchAll(Note.self, "SELECT id, title FROM note")) { error in
            XCTAssertEqual(error as? DatabaseError, .columnNotFound(name: "created", sql: "SELECT id, title FROM note"))
        }
    }

    func testFetchScalarReturnsNilForNoRowAndForNull() throws {
        XCTAssertNil(try db.fetchScalar(Int.self, "SELECT stars FROM note WHERE id = 2"))
        XCTAssertNil(try db.fetchScalar(Int.self, "SELECT stars FROM note WHERE id = 99"))
        XCTAssertThrowsError(try db.fetchScalar(Int.self, "SELECT title FROM note WHERE id = 1"))
    }

    func testRowCopiesKeepTheirValuesAfterTheCursorMoves() throws {
        let cursor = try db.query("SELECT title FROM note ORDER BY id")
        let first = try XCTUnwrap(try cursor.next()).copy()
        _ = try cursor.next()
        XCTAssertEqual(first[0], .text("first"))
        XCTAssertEqual(try db.fetchAll("SELECT title FROM note ORDER BY id").map { $0[0] },
                       [.text("first"), .text("second"), .text("third")])
    }

    func testLastInsertRowIDAndChanges() throws {
        try db.execute("INSERT INTO note(title) VALUES ('fourth')")
        XCTAssertEqual(db.lastInsertRowID, 4)
        XCTAssertEqual(db.changes, 1)
        try db.execute("UPDATE note SET stars = 1")
        XCTAssertEqual(db.changes, 4)
        XCTAssertGreaterThanOrEqual(db.totalChanges, 8)
    }

    func testStatementsAreCachedAndReusable() throws {
        let sql = "SELECT title FROM note WHERE id = ?"
        // Kept from the second use on: one-off SQL is not cached.
        let a = try db.cachedStatement(sql)
        let b = try db.cachedStatement(sql)
        let c = try db.cachedStatement(sql)
        XCTAssertFalse(a === b)
        XCTAssertTrue(b === c)
        // A cached statement held by a live cursor is not reset under it.
        let outer = try db.query("SELECT id FROM note ORDER BY id")
        var pairs: [String] = []
        while let row = try outer.next() {
            let id: Int = try row[0]
            let inner = try db.query("SELECT id FROM note ORDER BY id")
            _ = try inner.next()
            pairs.append("\(id):\(try db.fetchScalar(String.self, sql, [id])!)")
        }
        XCTAssertEqual(pairs, ["1:first", "2:second", "3:third"])

        let insert = try db.makeStatement("INSERT INTO note(title) VALUES (?)")
        for i in 0..<10 { try insert.execute(["batch \(i)"]) }
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM note WHERE title LIKE 'batch%'"), 10)
        XCTAssertThrowsError(try db.makeStatement("SELECT 1; SELECT 2"))
    }

    func testSQLErrorsCarryCodeMessageAndSQLButNotArguments() throws {
        try db.execute("CREATE UNIQUE INDEX by_title ON note(title)")
        XCTAssertThrowsError(try db.execute("INSERT INTO note(title) VALUES (?)", ["first"])) { error in
            guard case let .sqlite(code, message, sql)? = error as? DatabaseError else { return XCTFail("got \(error)") }
            XCTAssertEqual(code, 2067) // SQLITE_CONSTRAINT_UNIQUE
            XCTAssertEqual((error as? DatabaseError)?.resultCode, 19)
            XCTAssertTrue(message.contains("UNIQUE"))
            XCTAssertEqual(sql, "INSERT INTO note(title) VALUES (?)")
        }
        XCTAssertThrowsError(try db.execute("SELEC 1")) { error in
            XCTAssertTrue("\(error)".contains("syntax error"), "\(error)")
        }
        XCTAssertThrowsError(try db.execute("CREATE TABLE a(x); INSERT INTO a VALUES (?)", [1]))
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name = 'a'"), 0)
    }
}

/// Where `testAKeyedContainerKeptPastItsQueryThrows` keeps a container.
nonisolated(unsafe) private var keptContainer: Any?
