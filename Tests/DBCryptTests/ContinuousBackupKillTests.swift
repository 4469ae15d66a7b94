import Foundation
import TestFixtures
import XCTest
@testable import DBCrypt

/// An app with a continuous backup, killed with SIGKILL while it commits
/// without pause: at random moments, the instant a checkpoint writes the
/// database file, and the instant a record reaches the destination. The
/// app starts again on the same database and destination after each kill.
/// After every kill, a restore of the latest commit is a state the app had
/// (rows 1...n, each with its own text, and the tally saying n), and holds
/// every commit the backup reported as shipped. `make test` runs a few
/// kills of each kind, `make kill-tests` the full campaign (``KillCampaign``).
final class ContinuousBackupKillTests: XCTestCase {
    let key = "continuous kill test key"

    func testKilledAppLosesNoCommitItsBackupShipped() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let destination = dir.appendingPathComponent("backup").path
        let points: [KillPoint] = Array(repeating: .random, count: KillCampaign.kills(quick: 4, full: 10))
            + Array(repeating: .fileModified(path), count: KillCampaign.kills(quick: 2, full: 4))
            + Array(repeating: .fileAppears(directory: destination, prefix: "0"), count: KillCampaign.kills(quick: 2, full: 4))
        var shippedSoFar: UInt64 = 0
        var landed = 0, restores = 0
        for point in points.shuffled() {
            try? FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
            let output = Pipe()
            let target = KillTarget.testHelper(["continuous-backup-app", path, destination], keys: ["DBCRYPT_TEST_KEY": TestKeys.text(named: key)],
                                               output: .to(output.fileHandleForWriting))
            if try runAndKill(at: point, typicalDuration: 1.0, target: target) { landed += 1 }
            try output.fileHandleForWriting.close()
            let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
            let shipped = lines.compactMap { $0.hasPrefix("shipped ") ? UInt64($0.dropFirst(8)) : nil }.max()
            let committed = lines.compactMap { $0.hasPrefix("committed ") ? Int($0.dropFirst(10)) : nil }.max()
            shippedSoFar = max(shippedSoFar, shipped ?? 0)
            guard FileManager.default.fileExists(atPath: path), !(try BackupCatalog(DirectoryBackupStorage(path: destination))).snapshots.isEmpty else {
                continue   // killed before its first snapshot
            }
            let restored = dir.appendingPathComponent("restored.db").path
            removeDatabaseFiles(restored)
            let result = try ContinuousBackup.restore(from: DirectoryBackupStorage(path: destination), key: .named(key), to: restored)
            restores += 1
            XCTAssertNil(result.problem, "killed \(point)")
            XCTAssertGreaterThanOrEqual(result.commit, shippedSoFar, "killed \(point): a commit reported shipped is not in the backup")
            let rows = try checkBackupAppState(restored, key: key)
            if let committed { XCTAssertLessThanOrEqual(rows, committed + 1, "killed \(point): more rows than the app committed") }
        }
        XCTAssertGreaterThan(landed, points.count / 2, "most kills did not land: the test proves little")
        XCTAssertGreaterThan(shippedSoFar, 0)
        print("continuous backup: \(landed) kills of the app landed, \(restores) restores each held every commit reported shipped (up to \(shippedSoFar))")
    }
}
