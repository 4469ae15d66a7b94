import DBCryptCore
import Foundation
import XCTest
@testable import DBCrypt

/// What a file is, from its header alone.
final class FileFormatTests: XCTestCase {
    func testDetectsEachKindOfFile() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = { dir.appendingPathComponent($0).path }
        XCTAssertEqual(try FileFormat.detect(at: path("missing.db")), .missing)

        XCTAssertTrue(FileManager.default.createFile(atPath: path("empty.db"), contents: Data()))
        XCTAssertEqual(try FileFormat.detect(at: path("empty.db")), .empty)

        let plain = try Database(path: path("plain.db"))
        try plain.execute("PRAGMA page_size = 8192; PRAGMA user_version = 7; CREATE TABLE t(x)")
        plain.close()
        XCTAssertEqual(try FileFormat.detect(at: path("plain.db")), .plaintext(pageSize: 8192, userVersion: 7))

        let encrypted = try Database(path: path("encrypted.db"), key: .named("k"))
        try encrypted.execute("CREATE TABLE t(x)")
        encrypted.close()
        XCTAssertEqual(try FileFormat.detect(at: path("encrypted.db")), .notPlaintext)

        XCTAssertTrue(FileManager.default.createFile(atPath: path("short"), contents: Data("SQLite".utf8)))
        XCTAssertEqual(try FileFormat.detect(at: path("short")), .notPlaintext)
        XCTAssertTrue(FileManager.default.createFile(atPath: path("one byte"), contents: Data([0x53])))
        XCTAssertEqual(try FileFormat.detect(at: path("one byte")), .notPlaintext)

        XCTAssertThrowsError(try FileFormat.detect(at: dir.path)) { error in
            XCTAssertEqual(error as? DatabaseError, .isDirectory(path: dir.path))
        }
    }

    /// Page 1 as SQLite writes it passes the layout test whatever it holds:
    /// no table left, full of cells, split into an interior page (type 5) with a
    /// free block and fragments, at the smallest and the largest page size.
    func testEveryPlaintextDatabaseIsPlaintext() throws {
        let dir = try makeTemporaryDirectory(self)
        for (pageSize, tables) in [(512, 0), (512, 40), (4096, 0), (4096, 300), (65536, 0)] {
            let path = dir.appendingPathComponent("plain-\(pageSize)-\(tables).db").path
            let db = try Database(path: path)
            try db.execute("PRAGMA page_size = \(pageSize); CREATE TABLE first(x); DROP TABLE first")
            for table in 0..<tables { try db.execute("CREATE TABLE t\(table)(x); CREATE INDEX i\(table) ON t\(table)(x)") }
            // Dropping every third table leaves free blocks and fragments on the schema's pages.
            for table in stride(from: 0, to: tables, by: 3) { try db.execute("DROP TABLE t\(table)") }
            db.close()
            let page = Array(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(pageSize))
            if tables > 40 { XCTAssertEqual(page[100], 5, "page 1 is an interior page") }
            XCTAssertTrue(SQLiteHeader.hasPageOneLayout(page), "\(pageSize) \(tables)")
            XCTAssertEqual(try FileFormat.detect(at: path), .plaintext(pageSize: pageSize, userVersion: 0))
        }
    }
}
