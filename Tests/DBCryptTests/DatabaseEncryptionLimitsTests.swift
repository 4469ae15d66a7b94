import Foundation
import XCTest
@testable import DBCrypt

/// A full disk and progress on a large database.
final class DatabaseEncryptionLimitsTests: XCTestCase {
    let key = "limits key"

    func testAFileSizeLimitLeavesTheSourceByteIdenticalAndNoTemporary() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try EncryptionFixture.create(at: path, rows: 20_000)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertGreaterThan(before.count, 1_000_000)

        // The child may write files of at most 256 KiB: the new database cannot fit.
        let (status, _, message) = try startTestHelper(
            ["migrate", path, "--fsize-limit", "\(256 * 1024)"], keys: ["DBCRYPT_TEST_KEY": TestKeys.text(named: key)]).finish()

        XCTAssertEqual(status, 1)
        XCTAssertTrue(message.contains("file-size limit (ulimit -f)"), message)
        XCTAssertFalse(message.contains(key))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
        XCTAssertEqual(try EncryptionFixture.files(in: dir), ["app.db"])
    }

    func testTooLittleFreeSpaceIsRefusedUpFrontWithTheNumbers() throws {
        // A 2 MiB tmpfs holding a 1.2 MB database: the copy needs more than what is left.
        let mountPoint = try mountSmallDisk(self, in: try makeTemporaryDirectory(self), size: "2m")
        let path = mountPoint.appendingPathComponent("app.db").path
        try EncryptionFixture.create(at: path, rows: 8_000)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertGreaterThan(before.count, 1_000_000)

        XCTAssertThrowsError(try DatabaseEncryption.migrateInPlace(path, key: .named(key))) { error in
            guard case let .insufficientSpace(_, needed, available)? = error as? DatabaseError else {
                return XCTFail("got \(error)")
            }
            XCTAssertEqual(needed, Int64(before.count) + Int64(before.count) / 5)
            XCTAssertLessThan(available, needed)
            XCTAssertTrue("\(error)".contains("\(needed) bytes"), "\(error)")
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
        XCTAssertEqual(try EncryptionFixture.files(in: mountPoint), ["app.db"])
    }

    func testProgressGrowsMonotonicallyToTheTotal() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try EncryptionFixture.create(at: path, rows: 100_000)
        let log = ProgressLog()
        var options = ExportOptions()
        options.progress = { log.append($0) }

        try DatabaseEncryption.migrateInPlace(path, key: .named(key), options: options)

        let reports = log.all
        XCTAssertGreaterThan(reports.count, 20, "\(reports)")
        XCTAssertEqual(reports.first?.completed, 0)
        XCTAssertEqual(Set(reports.map(\.total)).count, 1)
        let total = reports[0].total
        XCTAssertEqual(reports.last, JobProgress(completed: total, total: total))
        for (earlier, later) in zip(reports, reports.dropFirst()) {
            XCTAssertLessThan(earlier.completed, later.completed)
        }
        // No jump larger than a twentieth of the work, but for the final step.
        for (earlier, later) in zip(reports, reports.dropFirst()).dropLast() {
            XCTAssertLessThanOrEqual(later.completed - earlier.completed, total / 20, "\(reports)")
        }
    }
}
