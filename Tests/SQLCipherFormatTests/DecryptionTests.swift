import Foundation
@testable import SQLCipherFormat
import TestFixtures
import XCTest

/// Decryption of files larger than one window (1 MiB), written while the
/// next window is decrypted: every page lands where it belongs, and a disk
/// that fills up is a clear error that leaves no copy behind.
final class DecryptionTests: XCTestCase {
    func testAFileOfManyWindowsAndALogDecryptsToTheRowsSQLCipherReads() throws {
        // About 3 MiB in the file and as much again only in the -wal.
        let path = try makeDatabase(self, rows: 20_000, leavingFramesInLog: true)
        let output = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("plain.db").path
        let reader = try EncryptedDatabaseFile(path: path, key: fixtureKey)
        let summary = try reader.decrypt(to: output)
        XCTAssertGreaterThan(fileSize(path), 3 << 20, "fewer than three windows")
        XCTAssertGreaterThan(summary.pagesFromLog, 256)
        XCTAssertEqual(try rowsThroughStockSQLite(output), try rowsThroughSQLCipher(path))
    }

    /// A window taken and never handed back (decryption failed in between):
    /// the writer still discards and goes away cleanly.
    func testAWindowTakenAndNeverSubmittedIsDiscardedCleanly() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("out.db").path
        do {
            let writer = WindowWriter(try FileWriter(creating: path), windowBytes: 4096)
            _ = try writer.buffer()
            writer.submit(0)
            _ = try writer.buffer()
            writer.discard()
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    func testADiskThatFillsUpIsCannotWriteAndLeavesNoCopy() throws {
        let path = try makeDatabase(self, rows: 9_000)
        let mountPoint = try mountSmallDisk(self, in: URL(fileURLWithPath: path).deletingLastPathComponent(), size: "1m")
        let reader = try EncryptedDatabaseFile(path: path, key: fixtureKey)
        XCTAssertThrowsError(try reader.decrypt(to: mountPoint.appendingPathComponent("plain.db").path)) { error in
            guard case SQLCipherFormatError.cannotWrite(_, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("No space left"), reason)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mountPoint.path), [])
    }
}
