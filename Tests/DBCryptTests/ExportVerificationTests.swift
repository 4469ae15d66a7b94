import Foundation
import XCTest
@testable import DBCrypt

/// The check a routine makes of its new file before it replaces anything:
/// it reads every page in use, so a page that does not authenticate
/// anywhere in the file (a table's, an index's, the last one) fails it.
final class ExportVerificationTests: XCTestCase {
    func testADamagedPageAnywhereInTheNewFileFailsVerification() throws {
        let dir = try makeTemporaryDirectory(self)
        let plain = dir.appendingPathComponent("plain.db").path, encrypted = dir.appendingPathComponent("encrypted.db").path
        do {
            let db = try Database(path: plain)
            try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, data BLOB); CREATE INDEX t_by_name ON t(name)")
            try db.execute("""
                INSERT INTO t(name, data) SELECT hex(randomblob(8)), randomblob(300)
                FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 2000) SELECT i FROM c)
                """)
            db.close()
        }
        let key = try DatabaseKey(rawKey: [UInt8](repeating: 9, count: 32))
        try DatabaseEncryption.encrypt(plain, to: encrypted, key: key)
        let facts = try SourceFacts(try Database(path: plain))
        let verify = { try Export.verifyCopy(encrypted, key: key, cipher: .sqlcipher4, against: facts, source: plain) }
        XCTAssertNoThrow(try verify())

        let pages = Int(try XCTUnwrap(FileManager.default.attributesOfItem(atPath: encrypted)[.size] as? Int)) / 4096
        XCTAssertGreaterThan(pages, 100)
        for page in [2, pages / 2, pages] {
            let offset = UInt64((page - 1) * 4096 + 1000)
            try flipByte(encrypted, at: offset)
            XCTAssertThrowsError(try verify(), "page \(page) of \(pages) damaged") { error in
                guard case DatabaseError.verificationFailed(let path, _) = error else { return XCTFail("page \(page): \(error)") }
                XCTAssertEqual(path, plain)
            }
            try flipByte(encrypted, at: offset)
        }
        XCTAssertNoThrow(try verify())
    }

    private func flipByte(_ path: String, at offset: UInt64) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: offset)
        let byte = try XCTUnwrap(try handle.read(upToCount: 1)).first!
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: [byte ^ 0x20])
    }
}
