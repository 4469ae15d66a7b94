import Foundation
import SQLCipherFormat
import TestFixtures
import XCTest

/// Where SQLite would stop reading a `-wal`, found without a key, on logs
/// that Debian's `sqlcipher` shell wrote and was killed before closing.
final class WriteAheadLogDamageTests: XCTestCase {
    private var path: String!

    override func setUpWithError() throws {
        path = try makeTemporaryDirectory(self).appendingPathComponent("app.db").path
        try writeLoggedDatabase(path, key: fixtureKeyText)   // three commits of one frame each
    }

    /// The log with `change` applied to its bytes.
    private func changeLog(_ change: (inout Data) -> Void) throws {
        var log = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
        change(&log)
        try log.write(to: URL(fileURLWithPath: path + "-wal"))
    }

    private var frameSize: Int { 24 + 1024 }

    func testAnIntactLogLosesNothing() throws {
        XCTAssertNil(try WriteAheadLogDamage.find(besideDatabaseAt: path))
        let file = try EncryptedDatabaseFile(path: path, key: fixtureKey)
        XCTAssertEqual(try file.verifyLog().frameCount, 3)
        XCTAssertEqual(try file.verifyLog().damage, [])
    }

    func testADamagedFrameBeforeACommitIsNamed() throws {
        try changeLog { $0[32 + frameSize + 24 + 200] ^= 0x01 }
        let found = try XCTUnwrap(try WriteAheadLogDamage.find(besideDatabaseAt: path))
        XCTAssertEqual(found.frame, 1)
        XCTAssertEqual(found.lostCommits, 1)
        XCTAssertEqual(found.description, "frame 1 is damaged (1 committed transaction from there on would be lost)")
        let damage = try EncryptedDatabaseFile(path: path, key: fixtureKey).verifyLog().damage
        XCTAssertEqual(damage.map(\.location), [.wal(frame: 1)])
    }

    /// A frame whose salts and checksum are both gone (a sector of zeros)
    /// stops SQLite, and every scan of the chain, at it: the commits after
    /// it carry the log's salts, and are found by them.
    func testAZeroedFrameBeforeCommitsIsNamed() throws {
        try changeLog { log in
            log.replaceSubrange((32 + self.frameSize)..<(32 + 2 * self.frameSize), with: Data(count: self.frameSize))
        }
        let found = try XCTUnwrap(try WriteAheadLogDamage.find(besideDatabaseAt: path))
        XCTAssertEqual(found.frame, 1)
        XCTAssertEqual(found.lostCommits, 1)
        let damage = try EncryptedDatabaseFile(path: path, key: fixtureKey).verifyLog().damage
        XCTAssertEqual(damage.map(\.description), ["WAL frame 1 (bytes 1080-2127): WAL frame header mismatch"])
    }

    /// A log of zeros (a power loss before its blocks reached the disk) is
    /// no log: SQLite ignores it, and it holds nothing to lose.
    func testALogOfZerosIsNoLog() throws {
        try changeLog { $0 = Data(count: $0.count) }
        XCTAssertNil(try WriteAheadLogDamage.find(besideDatabaseAt: path))
    }

    func testADamagedLogHeaderLosesEveryCommit() throws {
        try changeLog { $0[20] ^= 0x01 }   // a salt: the header's checksum fails
        let found = try XCTUnwrap(try WriteAheadLogDamage.find(besideDatabaseAt: path))
        XCTAssertNil(found.frame)
        XCTAssertEqual(found.lostCommits, 3)
    }

    /// A kill while appending leaves the log ending inside its last frame:
    /// SQLite ends the log there, and so does DBCrypt.
    func testALogCutInsideItsLastFrameEndsThere() throws {
        try changeLog { $0.removeLast(100) }
        XCTAssertNil(try WriteAheadLogDamage.find(besideDatabaseAt: path))
        let file = try EncryptedDatabaseFile(path: path, key: fixtureKey)
        XCTAssertEqual(try file.verifyLog().damage, [])
    }

    /// In space an earlier log used, a kill while appending a commit leaves
    /// a last frame whose chain breaks: SQLite ends the log there, and so
    /// does the check without a key, which cannot tell it from a commit
    /// whose checksum changed on disk. A verification with the key names it.
    func testALastCommitWhoseChainBreaksEndsTheLogButIsNamedByVerification() throws {
        try changeLog { $0[32 + 2 * frameSize + 16] ^= 0x01 }   // the last frame's stored checksum
        XCTAssertNil(try WriteAheadLogDamage.find(besideDatabaseAt: path))
        let file = try EncryptedDatabaseFile(path: path, key: fixtureKey)
        XCTAssertEqual(try file.verifyLog().damage.map(\.kind), [.walFrameHeader])
    }

    /// A last commit whose page changed on disk: the chain alone cannot tell
    /// it from a commit cut short, but its HMAC fails, and a verification
    /// with the key names it.
    func testALastCommitChangedOnDiskFailsItsHMAC() throws {
        try changeLog { $0[32 + 2 * frameSize + 24 + 300] ^= 0x01 }
        XCTAssertNil(try WriteAheadLogDamage.find(besideDatabaseAt: path))
        let file = try EncryptedDatabaseFile(path: path, key: fixtureKey)
        XCTAssertEqual(try file.verifyLog().damage.map(\.location), [.wal(frame: 2)])
    }

    /// A transaction that spilled to the log and rolled back leaves frames
    /// with the log's salts after the last commit, chained on frames since
    /// overwritten, and a killed writer a frame half written: not damage.
    func testFramesAfterTheLastCommitThatDoNotChainAreLeftovers() throws {
        try changeLog { log in
            var leftover = log[32..<(32 + frameSize)]
            leftover[leftover.startIndex + 4..<leftover.startIndex + 8] = Data([0, 0, 0, 0])   // not a commit
            leftover[leftover.startIndex + 16] ^= 0x01                                        // its chain does not continue
            var halfWritten = leftover   // a killed writer's: its header, another log's page
            halfWritten[halfWritten.startIndex + 24 + 500] ^= 0x01
            log += leftover + halfWritten
        }
        XCTAssertNil(try WriteAheadLogDamage.find(besideDatabaseAt: path))
        let file = try EncryptedDatabaseFile(path: path, key: fixtureKey)
        XCTAssertEqual(try file.verifyLog().damage, [], "SQLite reads nothing after the last commit")
    }
}
