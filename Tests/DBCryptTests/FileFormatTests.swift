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
}
