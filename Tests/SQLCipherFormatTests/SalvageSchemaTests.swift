import DBCrypt
import Foundation
import SQLCipherFormat
import TestFixtures
import XCTest

/// Every kind of table a schema holds is salvaged with its rows: WITHOUT
/// ROWID tables (index b-trees, the primary key first in each record),
/// full-text tables (their rows in shadow tables, their index rebuilt),
/// generated columns, text stored as UTF-16.
final class SalvageSchemaTests: XCTestCase {
    /// Each table's rows, read back the same through the linked SQLCipher
    /// from the original and from what `recover` wrote, nothing in
    /// lost_and_found. A full-text table without content keeps its index
    /// as the file held it, which the report says.
    func testEveryKindOfTableIsRecoveredWithItsRows() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("kinds.db").path
        let db = try Database(path: path, key: fixtureKey)
        // 1,500 x's on every third row: past what an index b-tree keeps on its page.
        let long = "substr(replace(hex(zeroblob(750)), '0', 'x'), 1, 1500 * (i % 3 = 0))"
        let numbers = "(WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 600) SELECT i FROM c)"
        try db.execute("""
            CREATE TABLE pairs(note TEXT, b TEXT, a INTEGER, PRIMARY KEY(a, b)) WITHOUT ROWID;
            INSERT INTO pairs SELECT \(long) || i, 'b' || (i % 7), i FROM \(numbers);
            CREATE VIRTUAL TABLE notes USING fts4(title, body);
            INSERT INTO notes(docid, title, body) SELECT i, 'note ' || i, 'word' || (i % 10) || ' common' FROM \(numbers);
            CREATE VIRTUAL TABLE bare USING fts4(content='', body);
            INSERT INTO bare(docid, body) SELECT i, 'word' || (i % 10) FROM \(numbers);
            """)
        var queries = [
            "SELECT a || '|' || b || '|' || note FROM pairs ORDER BY a, b",
            "SELECT docid || '|' || title FROM notes WHERE notes MATCH 'word7' ORDER BY docid",
            "SELECT 'doc ' || docid FROM bare WHERE bare MATCH 'word3' ORDER BY docid",
        ]
        if (try? db.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")) != nil {
            try db.execute("INSERT INTO docs(rowid, body) SELECT i, 'term' || (i % 5) FROM \(numbers)")
            queries.append("SELECT rowid || '|' || body FROM docs WHERE docs MATCH 'term3' ORDER BY rowid")
        }
        if (try? db.execute("CREATE TABLE g(a INTEGER, twice INTEGER AS (a * 2) STORED, c TEXT, next INTEGER AS (a + 1) VIRTUAL)")) != nil {
            try db.execute("INSERT INTO g(a, c) SELECT i, 'c' || i FROM \(numbers)")
            queries.append("SELECT rowid || '|' || a || '|' || twice || '|' || c || '|' || next FROM g ORDER BY rowid")
        }
        // A column added later (its rows' records are shorter: they read its default); an INTEGER PRIMARY KEY
        // DESC, which is not the rowid and holds its own value.
        try db.execute("""
            CREATE TABLE grown(a INTEGER);
            INSERT INTO grown SELECT i FROM \(numbers);
            ALTER TABLE grown ADD COLUMN b INTEGER NOT NULL DEFAULT 7;
            INSERT INTO grown(a, b) VALUES (0, 8);
            CREATE TABLE descending(id INTEGER PRIMARY KEY DESC, v TEXT);
            INSERT INTO descending(rowid, id, v) VALUES (1, 100, 'a'), (2, 200, 'b');
            """)
        queries += [
            "SELECT rowid || '|' || a || '|' || b FROM grown ORDER BY rowid",
            "SELECT rowid || '|' || id || '|' || v FROM descending ORDER BY rowid",
        ]
        let expected = try queries.map { try db.fetchAll(String.self, $0) }
        db.close()
        XCTAssertEqual(expected[0].count, 600)
        XCTAssertEqual(expected[1].count, 60)

        let output = path + ".rescued"
        let report = try DatabaseEncryption.recover(path, key: fixtureKey, to: output, reader: EncryptedDatabaseFile.self)
        XCTAssertEqual(report.notes.count, 1, "\(report.notes)")
        XCTAssertTrue(report.notes.first?.hasPrefix("the full-text index of bare is as the file held it, not rebuilt (") == true, "\(report.notes)")
        XCTAssertEqual(report.orphans, 0)
        XCTAssertEqual(report.tables.first { $0.name == "pairs" }?.rows, 600)
        XCTAssertFalse(report.tables.contains { $0.name == "notes" }, "a virtual table's rows are its shadow tables'")
        let rescued = try Database(path: output)
        defer { rescued.close() }
        XCTAssertEqual(try queries.map { try rescued.fetchAll(String.self, $0) }, expected, "\(queries)")
    }

    /// The rows of a table that cannot be created again (a collation this
    /// process lacks), WITHOUT ROWID or not, and the rows a table refuses
    /// (a CHECK the file's rows break), go to lost_and_found, as the notes say.
    func testRowsNoTableTakesAreInLostAndFound() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("refused.db").path
        let db = try Database(path: path, key: fixtureKey)
        try db.createCollation("app_order") { $0.compare($1) }
        try db.execute("""
            CREATE TABLE named(k TEXT COLLATE app_order PRIMARY KEY, v) WITHOUT ROWID;
            INSERT INTO named VALUES ('a', 1), ('b', 2), ('c', 3);
            CREATE TABLE listed(k TEXT COLLATE app_order, v);
            INSERT INTO listed VALUES ('x', 1);
            CREATE TABLE checked(v TEXT);
            INSERT INTO checked VALUES ('fine'), ('bad'), ('fine too');
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET sql = 'CREATE TABLE checked(v TEXT CHECK (v != ''bad''))' WHERE name = 'checked';
            PRAGMA writable_schema = OFF;
            """)
        db.close()

        let output = path + ".rescued"
        let report = try DatabaseEncryption.recover(path, key: fixtureKey, to: output, reader: EncryptedDatabaseFile.self)
        XCTAssertEqual(report.notes.count, 3, "\(report.notes)")
        XCTAssertTrue(report.notes.contains("table named could not be created again; its rows are in lost_and_found"), "\(report.notes)")
        XCTAssertTrue(report.notes.contains("table listed could not be created again; its rows are in lost_and_found"), "\(report.notes)")
        XCTAssertTrue(report.notes.contains { $0.hasPrefix("table checked refused 1 rows (") }, "\(report.notes)")
        XCTAssertEqual(report.tables.map(\.name), ["checked"])
        XCTAssertEqual(report.orphans, 5)
        let rescued = try Database(path: output)
        defer { rescued.close() }
        XCTAssertEqual(try rescued.fetchAll(String.self, "SELECT v FROM checked ORDER BY rowid"), ["fine", "fine too"])
        XCTAssertEqual(try rescued.fetchAll(String.self, "SELECT coalesce(id, '-') || '|' || c0 || '|' || coalesce(c1, '-') FROM lost_and_found ORDER BY c0"),
                       ["-|a|1", "-|b|2", "2|bad|-", "-|c|3", "1|x|1"])
    }

    /// A full-text index whose pages are lost is rebuilt from its content:
    /// the recovered table answers a query as the original did.
    func testALostFullTextIndexIsRebuiltFromItsContent() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("fts.db").path
        let db = try Database(path: path, key: fixtureKey)
        try db.execute("""
            CREATE VIRTUAL TABLE notes
            using fts4(body);
            INSERT INTO notes(docid, body) SELECT i, 'word' || (i % 10) || ' ' || hex(randomblob(200))
                FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 400) SELECT i FROM c);
            """)
        let query = "SELECT docid FROM notes WHERE notes MATCH 'word4' ORDER BY docid"
        let expected = try db.fetchAll(Int.self, query)
        let segments = try XCTUnwrap(db.fetchScalar(Int.self, "SELECT rootpage FROM sqlite_master WHERE name = 'notes_segments'"))
        XCTAssertGreaterThan(try db.fetchScalar(Int.self, "SELECT count(*) FROM notes_segments") ?? 0, 0, "the index is not in its own pages")
        db.close()
        XCTAssertEqual(expected.count, 40)

        try flip(path, at: Int64((segments - 1) * 4096 + 200), mask: 0xff)
        let output = path + ".rescued"
        let report = try DatabaseEncryption.recover(path, key: fixtureKey, to: output, reader: EncryptedDatabaseFile.self)
        XCTAssertEqual(report.pages.zeroedPages, [segments])
        XCTAssertEqual(report.notes, [])
        let rescued = try Database(path: output)
        defer { rescued.close() }
        XCTAssertEqual(try rescued.fetchAll(Int.self, query), expected)
    }

    /// Text stored as UTF-16, in either byte order, is read as such.
    func testUTF16TextIsRecoveredAsWritten() throws {
        for encoding in ["UTF-16le", "UTF-16be"] {
            let path = try makeTemporaryDirectory(self).appendingPathComponent("\(encoding).db").path
            let db = try Database(path: path, key: fixtureKey)
            try db.execute("PRAGMA encoding = '\(encoding)'")
            try db.execute("CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('Grüße'), ('日本語'), ('emoji 🙂'), ('')")
            XCTAssertEqual(try db.fetchScalar(String.self, "PRAGMA encoding"), encoding)
            db.close()
            let output = path + ".rescued"
            _ = try DatabaseEncryption.recover(path, key: fixtureKey, to: output, reader: EncryptedDatabaseFile.self)
            let rescued = try Database(path: output)
            XCTAssertEqual(try rescued.fetchAll(String.self, "SELECT v FROM t ORDER BY rowid"), ["Grüße", "日本語", "emoji 🙂", ""], encoding)
            rescued.close()
        }
    }
}
