import DBCrypt
import Foundation
import SQLCipherFormat
import TestFixtures
import XCTest

final class VerificationTests: XCTestCase {
    func testFilesTheLinkedSQLCipherWroteAreFoundAndIntact() throws {
        for settings in [CipherSettings.sqlcipher4, .sqlcipher3] {
            let path = try makeDatabase(self, settings)
            let file = try EncryptedDatabaseFile(path: path, key: fixtureKey)
            XCTAssertEqual(file.settings, settings)
            XCTAssertTrue(file.firstPageAuthenticates)
            let report = try file.verify()
            XCTAssertTrue(report.isIntact, "\(report.damage)")
            XCTAssertEqual(report.pageCount, Int(fileSize(path)) / settings.effectivePageSize)
        }
    }

    func testAWrongKeyIsAnErrorAtOpen() throws {
        let path = try makeDatabase(self, .sqlcipher3)
        XCTAssertThrowsError(try EncryptedDatabaseFile(path: path, key: .passphrase("wrong"))) { error in
            guard case SQLCipherFormatError.wrongKey = error else { return XCTFail("\(error)") }
            XCTAssertFalse("\(error)".contains("wrong\""))
        }
    }

    /// The key is right, page 1 is damaged: page 2 vouches for the key, and
    /// verification names page 1.
    func testADamagedFirstPageIsToldFromAWrongKey() throws {
        let path = try makeDatabase(self)
        try flip(path, at: 200, mask: 0x01)
        let file = try EncryptedDatabaseFile(path: path, key: fixtureKey)
        XCTAssertFalse(file.firstPageAuthenticates)
        XCTAssertEqual(file.settings, .sqlcipher4)
        let report = try file.verify()
        XCTAssertEqual(report.damage, [PageDamage(page: 1, location: .database, byteRange: 0..<4096, kind: .hmacMismatch)])
    }

    /// A change in the log header's salts or checksum (bytes 16-31) is the
    /// header's damage alone: its frames, which carry the salts and continue
    /// the checksum the header had, are not reported as damaged too.
    func testADamagedLogHeaderIsOneDamageNotOnePerFrame() throws {
        let path = try makeDatabase(self, .sqlcipher4, rows: 120, leavingFramesInLog: true)
        let file = try EncryptedDatabaseFile(path: path, key: fixtureKey)
        XCTAssertTrue(try file.verify().isIntact)
        for offset: Int64 in [8, 12, 16, 19, 20, 23, 24, 27, 28, 31] {
            try flip(path + "-wal", at: offset, mask: 0x20)
            defer { try? flip(path + "-wal", at: offset, mask: 0x20) }
            let report = try file.verify()
            XCTAssertEqual(report.damage.map(\.kind), [.badHeader], "WAL header byte \(offset): \(report.damage)")
            XCTAssertGreaterThan(report.walFrameCount, 3, "WAL header byte \(offset)")
        }
    }

    /// Every single-byte change anywhere in a file and its `-wal` is found and
    /// the exact page (or frame) named, but in the bytes the format leaves
    /// uncovered: SQLCipher 3's 12 bytes of random padding after each HMAC.
    /// A change in the salt (bytes 0-15) changes the keys: the file no longer
    /// opens with its key.
    func testEverySingleByteChangeIsFoundAndNamed() throws {
        var generator = SystemRandomNumberGenerator()
        for settings in [CipherSettings.sqlcipher4, .sqlcipher3] {
            let path = try makeDatabase(self, settings, rows: 120, leavingFramesInLog: true)
            let key = fixtureKey
            let file = try EncryptedDatabaseFile(path: path, key: key)
            let clean = try file.verify()
            XCTAssertTrue(clean.isIntact, "\(clean.damage)")
            XCTAssertGreaterThan(clean.walFrameCount, 3)
            let pageSize = Int64(settings.effectivePageSize), databaseSize = fileSize(path), logSize = fileSize(path + "-wal")
            let frameSize = Int64(24) + pageSize
            var checked = 0
            // 100 random bytes of each format in `make test`, 400 in `make kill-tests`.
            let flips = KillCampaign.size(quick: 100, full: 400)
            for _ in 0..<flips {
                let inLog = Bool.random(using: &generator)
                let target = inLog ? path + "-wal" : path
                let offset = Int64.random(in: 0..<(inLog ? logSize : databaseSize), using: &generator)
                let mask = UInt8.random(in: 1...255, using: &generator)
                try flip(target, at: offset, mask: mask)
                defer { try? flip(target, at: offset, mask: mask) }
                if !inLog && offset < 16 {
                    XCTAssertThrowsError(try EncryptedDatabaseFile(path: path, key: key), "salt byte \(offset)")
                    continue
                }
                let withinPage = inLog ? (offset - 32) % frameSize - 24 : offset % pageSize
                if settings.format == .sqlcipher3, withinPage >= pageSize - 12, !inLog || offset >= 32 {
                    continue  // SQLCipher 3's padding: no HMAC covers it (in the log, the checksum does)
                }
                let damage = try file.verify().damage
                XCTAssertEqual(damage.count, 1, "\(settings) \(inLog ? "wal" : "db") byte \(offset): \(damage)")
                guard let found = damage.first else { continue }
                XCTAssertTrue(found.byteRange.contains(offset), "\(found) does not hold byte \(offset)")
                if inLog {
                    if offset >= 32 {
                        XCTAssertEqual(found.location, .wal(frame: Int((offset - 32) / frameSize)))
                    } else {
                        XCTAssertEqual(found.kind, .badHeader)
                    }
                } else {
                    XCTAssertEqual(found.page, Int(offset / pageSize) + 1)
                    XCTAssertEqual(found.kind, .hmacMismatch)
                }
                checked += 1
            }
            XCTAssertGreaterThan(checked, flips * 3 / 4)
        }
    }

    func testACutShortFileNamesItsLastPage() throws {
        let path = try makeDatabase(self)
        let size = fileSize(path)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(size - 4096 - 100))
        try handle.close()
        let report = try EncryptedDatabaseFile(path: path, key: fixtureKey).verify()
        let lastFull = Int((size - 4096 - 100) / 4096)
        XCTAssertEqual(report.damage.map(\.kind), [.shortPage, .missing])
        XCTAssertEqual(report.damage.first?.page, lastFull + 1)
        XCTAssertEqual(report.damage.last?.byteRange.upperBound, size)
    }
}

final class LockBytePageTests: XCTestCase {
    /// SQLite never writes the page holding its lock bytes at 1 GiB, so a
    /// file past 1 GiB has one page that no HMAC covers: it is not damage.
    /// (A sparse file: every page past the fixture's is zeros, and damaged.)
    func testTheLockBytePageOfAFilePastOneGiBIsNotDamage() throws {
        let path = try makeDatabase(self, rows: 10)
        let pageSize = 4096, pages = (1 << 30) / pageSize + 2
        let written = Int(fileSize(path)) / pageSize
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(pages * pageSize))
        try handle.close()
        let report = try EncryptedDatabaseFile(path: path, key: fixtureKey).verify()
        XCTAssertEqual(report.damageCount, pages - written - 1, "every zero page but the lock-byte page")
        XCTAssertFalse(report.damage.contains { $0.page == (1 << 30) / pageSize + 1 })
    }
}
