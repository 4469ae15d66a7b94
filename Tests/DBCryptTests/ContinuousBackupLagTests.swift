import Foundation
import Synchronization
import TestFixtures
import XCTest
@testable import DBCrypt

/// How far behind a continuous backup is (``ContinuousBackup/lag()``), and
/// the bound on what it keeps from being checkpointed while its
/// destination cannot be written (``ContinuousBackup/Options/maximumBacklog``).
final class ContinuousBackupLagTests: XCTestCase {
    let key = DatabaseKey.named("continuous backup lag test key")

    func testLagCountsTheCommitsNotShippedYet() throws {
        let dir = try makeTemporaryDirectory(self)
        let storage = try DirectoryBackupStorage(path: dir.appendingPathComponent("backup").path)
        var backupOptions = ContinuousBackup.Options()
        backupOptions.interval = .seconds(3600)
        let pool = try makePool(dir, storage: storage, options: backupOptions)
        let backup = try XCTUnwrap(pool.continuousBackup)
        XCTAssertEqual(try backup.lag().commits, 1, "the schema's commit")
        try backup.shipNow()
        XCTAssertEqual(try backup.lag(), .init(commits: 0, seconds: 0))
        try insert(pool, count: 5)
        let behind = try backup.lag()
        XCTAssertEqual(behind.commits, 5)
        XCTAssertGreaterThan(behind.seconds, 0)
        try backup.shipNow()
        XCTAssertEqual(try backup.lag(), .init(commits: 0, seconds: 0))
        try pool.close()
    }

    /// While the destination is full, the log grows up to the bound; past it
    /// the backup lets go, says so once, checkpoints bound the log again, and
    /// the app's commits go on; once there is room, a snapshot holds them all.
    func testPastTheBoundTheBackupLetsGoAndStartsOverWithASnapshot() throws {
        let dir = try makeTemporaryDirectory(self)
        let mountPoint = try mountSmallDisk(self, in: dir, size: "8m")
        let storage = try DirectoryBackupStorage(path: mountPoint.path)
        let reports = Mutex<[String]>([])
        var backupOptions = ContinuousBackup.Options()
        backupOptions.interval = .milliseconds(20)
        backupOptions.maximumBacklog = 512 << 10
        backupOptions.failed = { error in reports.withLock { $0.append("\(error)") } }
        let pool = try makePool(dir, storage: storage, options: backupOptions)
        let backup = try XCTUnwrap(pool.continuousBackup)
        try backup.shipNow()
        let filler = mountPoint.appendingPathComponent("filler").path
        XCTAssertTrue(FileManager.default.createFile(atPath: filler, contents: Data(count: 7 * 1024 * 1024 + 512 * 1024)))

        var rows = 0
        let letGo = waitUntil(timeout: 30, every: 0.01) {
            try? self.insert(pool, count: 20)
            rows += 20
            return reports.withLock { $0.contains { $0.contains("let go of the commits not shipped") } }
        }
        XCTAssertTrue(letGo, "the backup never let go: \(reports.withLock { $0 }.suffix(3))")
        XCTAssertEqual(reports.withLock { $0 }.filter { $0.contains("let go") }.count, 1, "said more than once")
        XCTAssertNil(try backup.lag().commits)
        // Nothing holds the log now: a checkpoint copies all of it and starts it over.
        XCTAssertTrue(try pool.checkpoint(.truncate), "the backup still holds the log")
        var status = stat()
        XCTAssertEqual(stat(pool.path + "-wal", &status), 0)
        XCTAssertEqual(status.st_size, 0, "the log was not started over")
        try insert(pool, count: 3)
        rows += 3

        try FileManager.default.removeItem(atPath: filler)
        let shipped = try XCTUnwrap(try backup.shipNow())
        XCTAssertEqual(try backup.lag(), .init(commits: 0, seconds: 0))
        try pool.close()
        let restored = dir.appendingPathComponent("restored.db").path
        let result = try ContinuousBackup.restore(from: storage, key: key, to: restored)
        XCTAssertEqual(result.commit, shipped.commit)
        let db = try Database(path: restored, key: key)
        defer { db.close() }
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM item"), rows)
    }

    /// Past the bound, with no checkpoint asked for: the pool's own restart
    /// of the log, at 4,000 frames, goes on as without a backup.
    func testPastTheBoundThePoolRestartsTheLogByItself() throws {
        let dir = try makeTemporaryDirectory(self)
        let mountPoint = try mountSmallDisk(self, in: dir, size: "64m")
        let storage = try DirectoryBackupStorage(path: mountPoint.path)
        let reports = Mutex<[String]>([])
        var backupOptions = ContinuousBackup.Options()
        backupOptions.interval = .milliseconds(200)
        backupOptions.maximumBacklog = 1 << 20
        backupOptions.failed = { error in reports.withLock { $0.append("\(error)") } }
        let pool = try makePool(dir, storage: storage, options: backupOptions)
        try XCTUnwrap(pool.continuousBackup).shipNow()
        XCTAssertTrue(FileManager.default.createFile(atPath: mountPoint.appendingPathComponent("filler").path,
                                                     contents: Data(count: 63 * 1024 * 1024 + 512 * 1024)))
        let wal = pool.path + "-wal"
        let first = try XCTUnwrap(try CommittedFrames.generation(of: wal)).checkpointSequence
        // About 6,000 pages: past the bound, then past the pool's 4,000 frames.
        let restarted = waitUntil(timeout: 120, every: 0) {
            try? pool.write { db in try db.execute("INSERT INTO item(body) VALUES (hex(randomblob(1800)))") }
            return (try? CommittedFrames.generation(of: wal))??.checkpointSequence != first
        }
        XCTAssertTrue(restarted, "the log never started over")
        XCTAssertTrue(reports.withLock { $0 }.contains { $0.contains("let go of the commits not shipped") })
        try FileManager.default.removeItem(atPath: mountPoint.appendingPathComponent("filler").path)
        try pool.close()
    }

    private func makePool(_ dir: URL, storage: any BackupStorage, options backupOptions: ContinuousBackup.Options) throws -> DatabasePool {
        var options = Database.Options()
        options.continuousBackup = .init(storage: storage, options: backupOptions)
        return try TestFixtures.makePool(dir.appendingPathComponent("app.db").path, key: key, options: options,
                                         schema: "CREATE TABLE IF NOT EXISTS item(id INTEGER PRIMARY KEY, body TEXT)")
    }

    private func insert(_ pool: DatabasePool, count: Int) throws {
        for _ in 0..<count {
            try pool.write { db in try db.execute("INSERT INTO item(body) VALUES (hex(randomblob(500)))") }
        }
    }
}
