import DBCrypt
import Foundation
@testable import SQLCipherFormat
import TestFixtures
import XCTest

final class SalvageTests: XCTestCase {
    /// With every page intact, the scanner reads every row the linked
    /// SQLCipher reads, with its rowid; with pages lost, the rest.
    func testTheScannerReadsWhatAuthenticates() throws {
        let path = try makeDatabase(self, rows: 400)
        let expected = try rowsThroughSQLCipher(path)
        let file = try EncryptedDatabaseFile(path: path, key: fixtureKey)
        let pages = path + ".pages"
        XCTAssertEqual(try file.recoverPages(to: pages).zeroedPages, [])
        let scanner = try PageScanner(path: pages)
        let table = try XCTUnwrap(try scanner.schema().first { $0.name == "t" })
        var rows: [String] = []
        try scanner.rows(ofTreeAt: table.rootPage) { rowid, values in
            guard let rowid, case let .text(name) = values[1], case let .blob(data) = values[2] else { return XCTFail("\(values)") }
            rows.append("\(rowid) \(name) " + data.map { String(format: "%02X", $0) }.joined())
        }
        XCTAssertEqual(rows, expected)
        var orphans = 0
        try scanner.orphanRows { _, _, _ in orphans += 1 }
        XCTAssertEqual(orphans, 0, "free pages' old rows are not orphans")

        // A leaf in the middle lost: its rows are gone, the others are read.
        try flip(path, at: Int64(4096 * 5 + 10), mask: 0xff)
        let damaged = try EncryptedDatabaseFile(path: path, key: fixtureKey)
        let salvaged = path + ".salvaged"
        XCTAssertEqual(try damaged.recoverPages(to: salvaged).zeroedPages, [6])
        let rescanner = try PageScanner(path: salvaged)
        var kept = 0
        try rescanner.rows(ofTreeAt: table.rootPage) { _, _ in kept += 1 }
        XCTAssertGreaterThan(kept, expected.count - 20)
        XCTAssertLessThan(kept, expected.count)
    }

    /// The library's routine: a damaged file salvaged into a checked
    /// plaintext database put in place, its report naming the page lost;
    /// an output that exists and a wrong key refused, nothing written.
    func testDatabaseEncryptionRecoverSalvagesIntoACheckedFile() throws {
        let path = try makeDatabase(self, rows: 400)
        let expected = try rowsThroughSQLCipher(path).count
        try flip(path, at: Int64(4096 * 5 + 10), mask: 0xff)
        let output = path + ".rescued"
        let report = try DatabaseEncryption.recover(path, key: fixtureKey, to: output, reader: EncryptedDatabaseFile.self)
        XCTAssertEqual(report.pages.zeroedPages, [6])
        XCTAssertTrue(report.description.hasSuffix("1 of \(report.pages.pageCount) pages did not authenticate and were lost (page 6)."),
                      report.description)
        let rows = try XCTUnwrap(report.tables.first { $0.name == "t" }).rows
        XCTAssertGreaterThan(rows, expected - 20)
        XCTAssertLessThan(rows, expected)
        let db = try Database(path: output)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM t"), rows)
        XCTAssertEqual(try db.integrityProblems(), [])
        db.close()

        XCTAssertThrowsError(try DatabaseEncryption.recover(path, key: fixtureKey, to: output, reader: EncryptedDatabaseFile.self)) {
            guard case DatabaseError.destinationExists = $0 else { return XCTFail("\($0)") }
        }
        let elsewhere = path + ".wrong-key"
        XCTAssertThrowsError(try DatabaseEncryption.recover(path, key: .named("not the key"), to: elsewhere, reader: EncryptedDatabaseFile.self)) {
            XCTAssertEqual(($0 as? any DBCryptError)?.category, .wrongKey, "\($0)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: elsewhere))

        // A scratch file that exists is refused, and left as it was.
        let scratch = path + ".mine"
        XCTAssertTrue(FileManager.default.createFile(atPath: scratch, contents: Data("mine".utf8)))
        let other = try Database(path: path + ".other")
        defer { other.close() }
        XCTAssertThrowsError(try EncryptedDatabaseFile(path: path, key: fixtureKey).salvage(into: SalvageConnection(other), scratch: scratch)) {
            XCTAssertEqual(($0 as? any DBCryptError)?.category, .exists, "\($0)")
        }
        XCTAssertEqual(FileManager.default.contents(atPath: scratch), Data("mine".utf8))
    }

    /// A record whose serial type is a negative 9-byte varint (found by the fuzzer) is not a record.
    func testARecordWithANegativeSerialTypeIsRefused() {
        XCTAssertNil(PageScanner.record([10] + [UInt8](repeating: 0xff, count: 9)))
        XCTAssertEqual(PageScanner.record([3, 1, 15, 7, 0x61]), [.integer(7), .text("a")])
    }
}
