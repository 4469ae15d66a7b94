import Foundation
import SQLCipherFormat
import TestFixtures
import XCTest
@testable import DBCrypt

/// The routines that read a file through the linked SQLCipher, else the
/// page reader: check, describe, and the header conversion.
final class ReadOnlyRoutineTests: XCTestCase {
    private var pageReader: ExportOptions {
        var options = ExportOptions()
        options.pageReader = EncryptedDatabaseFile.self
        return options
    }

    /// A database with 20 rows in `note`, and its path.
    private func makeNotes(_ name: String) throws -> String {
        let path = try makeTemporaryDirectory(self).appendingPathComponent(name).path
        let db = try makeDatabase(path, key: TestKeys.key)
        try db.execute("CREATE TABLE note(body TEXT)")
        for i in 0..<20 { try db.execute("INSERT INTO note VALUES (?)", [String(repeating: "n\(i)", count: 200)]) }
        db.close()
        return path
    }

    func testACheckNamesTheDamagedPageAndAnIntactFileIsIntact() throws {
        let path = try makeNotes("app.db")
        let intact = try DatabaseEncryption.check(path, key: TestKeys.key, options: pageReader)
        XCTAssertTrue(intact.isIntact, intact.description)
        XCTAssertTrue(intact.pages?.authenticated ?? false)
        XCTAssertTrue(intact.description.hasPrefix("ok: \(path)"), intact.description)

        // One byte of page 2 changed: the page reader names it, and SQLite is not asked.
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: 4096 + 100)
        let byte = try XCTUnwrap(handle.readData(ofLength: 1).first)
        try handle.seek(toOffset: 4096 + 100)
        handle.write(Data([byte ^ 0xFF]))
        try handle.close()
        let damaged = try DatabaseEncryption.check(path, key: TestKeys.key, options: pageReader)
        XCTAssertFalse(damaged.isIntact)
        XCTAssertEqual(damaged.pages?.damage.map(\.page), [2])
        XCTAssertEqual(damaged.description, "page 2 (bytes 4096-8191): HMAC mismatch")

        XCTAssertThrowsError(try DatabaseEncryption.check(path, key: TestKeys.other, options: pageReader)) { error in
            XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: path))
        }

        // An empty file is no database, with a key or without.
        let empty = path + "-empty"
        XCTAssertTrue(FileManager.default.createFile(atPath: empty, contents: Data()))
        for key in [nil, TestKeys.key] {
            XCTAssertThrowsError(try DatabaseEncryption.check(empty, key: key, options: pageReader)) { error in
                XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: empty))
            }
            XCTAssertThrowsError(try DatabaseEncryption.describe(empty, key: key, options: pageReader)) { error in
                XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: empty))
            }
        }
    }

    /// A virtual table whose module this SQLite lacks (a file made where
    /// FTS5 is, read where it is not) leaves the description whole: its
    /// rows are in its shadow tables, which are counted; the virtual table
    /// is not (counting it needs the module).
    func testADescriptionLeavesOutVirtualTables() throws {
        let path = try makeNotes("app.db")
        let db = try Database(path: path, key: TestKeys.key)
        // What an engine with the module writes in the schema, written here by hand.
        try db.execute("""
            PRAGMA writable_schema = ON;
            INSERT INTO sqlite_master VALUES ('table', 'search', 'search', 0, 'CREATE VIRTUAL TABLE search USING module_not_here(body)');
            PRAGMA writable_schema = OFF;
            CREATE TABLE search_content(id INTEGER PRIMARY KEY, body TEXT);
            INSERT INTO search_content(body) VALUES ('a'), ('b');
            """)
        db.close()
        let described = try DatabaseEncryption.describe(path, key: TestKeys.key, options: pageReader)
        XCTAssertEqual(described.tables.map(\.name), ["note", "search_content"])
        XCTAssertEqual(described.tables.map(\.rows), [20, 2])
    }

    func testADescriptionCountsRowsAndSaysWhichReaderReadIt() throws {
        let path = try makeNotes("app.db")
        let described = try DatabaseEncryption.describe(path, key: TestKeys.key, options: pageReader)
        XCTAssertNil(described.pageReaderReport)
        XCTAssertEqual(described.tables.map(\.name), ["note"])
        XCTAssertEqual(described.tables.map(\.rows), [20])
        XCTAssertEqual(described.facts.first?.name, "format")
        XCTAssertEqual(described.facts.first { $0.name == "page_size" }?.value, .integer(4096))

        // A plaintext header the linked SQLCipher cannot read, or reads: the same file either way.
        guard let salt = try DatabaseEncryption.convertHeader(path, key: TestKeys.key, plaintextHeaderSize: 32, options: pageReader) else {
            return XCTFail("the file already had a plaintext header")
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(16), Data("SQLite format 3\u{0}".utf8))
        XCTAssertNil(try DatabaseEncryption.convertHeader(path, key: TestKeys.key, cipher: CipherSettings(.sqlcipher4, salt: salt),
                                                          plaintextHeaderSize: 32, options: pageReader), "nothing to do")
        var settings = CipherSettings(.sqlcipher4, salt: salt)
        settings.plaintextHeaderSize = 32
        let shared = try DatabaseEncryption.describe(path, key: TestKeys.key, cipher: settings, options: pageReader)
        if try CipherInfo.linked().supports(.plaintextHeaderSize) {
            XCTAssertNil(shared.pageReaderReport)
            XCTAssertEqual(shared.tables.map(\.rows), [20])
        } else {
            XCTAssertEqual(shared.pageReaderReport?.isIntact, true)
            XCTAssertTrue(shared.tables.isEmpty)
        }
        XCTAssertTrue(try DatabaseEncryption.check(path, key: TestKeys.key, cipher: settings, options: pageReader).isIntact)
    }

    /// (Another process's connection is refused with `databaseInUse`:
    /// `dbcrypt header` is that process in FileIdentityCommandTests.)
    func testAHeaderConversionNeedsAPageReader() throws {
        let path = try makeNotes("app.db")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try DatabaseEncryption.convertHeader(path, key: TestKeys.key, plaintextHeaderSize: 32)) { error in
            guard case .misuse? = error as? DatabaseError else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
    }
}
