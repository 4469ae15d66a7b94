import Foundation
import Synchronization
import TestFixtures
import XCTest
@testable import DBCrypt

/// Continuous backup: every commit shipped, any one restored; what the
/// destination holds and what a restore detects there.
final class ContinuousBackupTests: XCTestCase {
    let key = DatabaseKey.named("continuous backup test key")
    static let marker = "plaintext-marker-7f3a"

    // MARK: - Every commit, restored

    func testRestoresEveryShippedCommit() throws {
        let dir = try makeTemporaryDirectory(self)
        let (pool, storage) = try makePool(dir)
        var shipped: [(commit: UInt64, rows: Int)] = []
        for i in 1...6 {
            try insert(pool, count: i == 3 ? 3 : 1)
            let rows = try count(pool)
            shipped.append((try XCTUnwrap(try pool.continuousBackup?.shipNow()).commit, rows))
        }
        XCTAssertEqual(Set(shipped.map(\.commit)).count, shipped.count, "a round shipped nothing")
        for (commit, rows) in shipped {
            let restored = dir.appendingPathComponent("restored-\(commit).db").path
            let result = try ContinuousBackup.restore(from: storage, key: key, to: restored, target: .commit(commit))
            XCTAssertEqual(result.commit, commit)
            XCTAssertNil(result.problem)
            try checkRestored(restored, rows: rows)
        }
        let latest = dir.appendingPathComponent("latest.db").path
        let result = try ContinuousBackup.restore(from: storage, key: key, to: latest)
        XCTAssertEqual(result.commit, shipped.last!.commit)
        try checkRestored(latest, rows: shipped.last!.rows)

        let byTime = dir.appendingPathComponent("by-time.db").path
        XCTAssertEqual(try ContinuousBackup.restore(from: storage, key: key, to: byTime, target: .time(result.time)).commit, result.commit)
        // Any Date converts without a trap: the far future is the latest commit, no number is none.
        for (index, seconds) in [Double.infinity, 1e300, Double(UInt64.max)].enumerated() {
            let far = dir.appendingPathComponent("far-\(index).db").path
            XCTAssertEqual(try ContinuousBackup.restore(from: storage, key: key, to: far,
                                                        target: .time(Date(timeIntervalSince1970: seconds))).commit, result.commit)
        }
        for seconds in [-Double.infinity, Double.nan, -1e300] {
            XCTAssertThrowsError(try ContinuousBackup.restore(from: storage, key: key, to: dir.appendingPathComponent("x.db").path,
                                                              target: .time(Date(timeIntervalSince1970: seconds)))) { error in
                guard case .noSuchCommit? = error as? BackupError else { return XCTFail("\(seconds): \(error)") }
            }
        }
        XCTAssertThrowsError(try ContinuousBackup.restore(from: storage, key: key, to: dir.appendingPathComponent("x.db").path,
                                                          target: .commit(999))) { error in
            guard case .noSuchCommit? = error as? BackupError else { return XCTFail("\(error)") }
        }
        try pool.close()
    }

    /// Frames shipped across the WAL starting over (a checkpoint copied it
    /// all, and the next write began it again) and across a new snapshot.
    func testCommitsAcrossWALRestartsAndSnapshots() throws {
        let dir = try makeTemporaryDirectory(self)
        var options = ContinuousBackup.Options()
        options.interval = .seconds(3600)
        options.snapshotInterval = .milliseconds(1)
        let (pool, storage) = try makePool(dir, options: options)
        var restarts = 0
        var last = try walCheckpointSequence(pool.path)
        for _ in 0..<8 {
            try insert(pool, count: 50)
            try pool.continuousBackup?.shipNow()
            _ = try pool.checkpoint(.passive)
            try pool.continuousBackup?.shipNow()
            let sequence = try walCheckpointSequence(pool.path)
            if sequence != last { restarts += 1 }
            last = sequence
        }
        try insert(pool, count: 1)
        let final = try XCTUnwrap(try pool.continuousBackup?.shipNow())
        XCTAssertGreaterThan(restarts, 0, "the WAL never started over: the test proves little")
        XCTAssertGreaterThan(try BackupCatalog(storage).snapshots.count, 2)
        let restored = dir.appendingPathComponent("restored.db").path
        XCTAssertEqual(try ContinuousBackup.restore(from: storage, key: key, to: restored).commit, final.commit)
        try checkRestored(restored, rows: try count(pool))
        try pool.close()
    }

    /// A pool's writer, in the commit that fills the WAL to 4,000 frames,
    /// has the backup ship what is left (a round beside it when more than a
    /// 1 MiB tail) and let go of its read, and starts the log over: the WAL
    /// stays bounded under writes without pause, and every commit is still
    /// in the backup.
    func testTheWALStaysBoundedWhileEveryCommitIsShipped() throws {
        let dir = try makeTemporaryDirectory(self)
        let (pool, storage) = try makePool(dir)
        let first = try walCheckpointSequence(pool.path)
        try insert(pool, count: 10_000)
        let walBytes = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: pool.path + "-wal")[.size] as? Int)
        XCTAssertNotEqual(try walCheckpointSequence(pool.path), first, "the WAL never started over")
        // The mark, and what the writer adds while a round ships what is past
        // a commit's 1 MiB tail: commits go on meanwhile, as many as the
        // machine makes (2,000 frames' worth were once not enough on two
        // busy cores). Without the restart it holds a frame or more for
        // each of the 10,000 commits.
        XCTAssertLessThan(walBytes, 8_000 * 4_120, "the WAL grew past the restart mark")
        XCTAssertEqual(try BackupCatalog(storage).snapshots.count, 1, "a start of the log over was taken for frames not seen")
        let final = try XCTUnwrap(try pool.continuousBackup?.shipNow())
        try checkLatest(storage, in: dir, commit: final.commit, rows: 10_000)
        try pool.close()
    }

    /// Records older than the newest snapshot older than the retention are
    /// deleted at the next snapshot; every commit from that snapshot on can
    /// still be restored, and the ones before it are said to be gone.
    func testPrunesWhatTheRetentionNoLongerNeeds() throws {
        let dir = try makeTemporaryDirectory(self)
        var options = ContinuousBackup.Options()
        options.interval = .seconds(3600)
        options.snapshotInterval = .milliseconds(1)
        options.retention = .milliseconds(300)
        let (pool, storage) = try makePool(dir, options: options)
        var shipped: [ContinuousBackup.ShippedCommit] = []
        for _ in 0..<3 {
            try insert(pool, count: 1)
            shipped.append(try XCTUnwrap(try pool.continuousBackup?.shipNow()))
        }
        let before = try BackupCatalog(storage).entries.map(\.number)
        pause(0.4)   // the clock passes the retention: a time this test sets, not a wait for a thread
        try insert(pool, count: 1)
        try pool.continuousBackup?.shipNow()   // a snapshot older than the retention exists now: what precedes it goes
        try insert(pool, count: 1)
        let last = try XCTUnwrap(try pool.continuousBackup?.shipNow())
        let after = try BackupCatalog(storage)
        XCTAssertGreaterThan(after.entries.first!.number, before.first!, "nothing was pruned")
        XCTAssertTrue(after.entries.first?.kind == .snapshot, "the backup no longer starts with a snapshot")
        try checkLatest(storage, in: dir, commit: last.commit, rows: 5)
        XCTAssertThrowsError(try ContinuousBackup.restore(from: storage, key: key, to: dir.appendingPathComponent("gone.db").path,
                                                          target: .commit(shipped[0].commit))) { error in
            guard case .noSuchCommit? = error as? BackupError else { return XCTFail("\(error)") }
        }
        try pool.close()
    }

    /// A record that a running backup prunes between a restore's listing
    /// and its reading of it is no failure (it once failed the restore with
    /// "cannot be read, or is not there. Check that it is mounted"): the
    /// restore lists again, and restores from what is there.
    func testARecordPrunedWhileARestoreReadsIsListedAgain() throws {
        let dir = try makeTemporaryDirectory(self)
        var options = ContinuousBackup.Options()
        options.interval = .seconds(3600)
        options.snapshotInterval = .milliseconds(1)
        let (pool, directory) = try makePool(dir, options: options)
        var last: ContinuousBackup.ShippedCommit?
        for _ in 0..<3 {
            try insert(pool, count: 1)
            last = try pool.continuousBackup?.shipNow()
        }
        try pool.close()
        let oldest = try XCTUnwrap(BackupCatalog(directory).entries.first).name
        let storage = PrunedWhileRead(directory, victim: oldest)
        try checkLatest(storage, in: dir, commit: try XCTUnwrap(last).commit, rows: 3)
        XCTAssertTrue(storage.pruned, "the record was never read: the test proves nothing")
        XCTAssertFalse(try directory.list().contains(oldest))
    }

    /// A write that stores its object and then fails (as a rename done
    /// before the directory's flush failed, or an upload whose answer was
    /// lost) is written again with the next round's content under the same
    /// number: restore takes the later one, and pruning deletes the other.
    func testARecordStoredByAFailedWriteIsSuperseded() throws {
        let dir = try makeTemporaryDirectory(self)
        let storage = FailingAfterStoring(try DirectoryBackupStorage(path: dir.appendingPathComponent("destination").path))
        var backupOptions = ContinuousBackup.Options()
        backupOptions.interval = .seconds(3600)
        var options = Database.Options()
        options.continuousBackup = .init(storage: storage, options: backupOptions)
        let pool = try DatabasePool(path: dir.appendingPathComponent("app.db").path, key: key, options: options)
        try pool.write { db in try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)") }
        try insert(pool, count: 1)
        storage.failNext()
        XCTAssertThrowsError(try pool.continuousBackup?.shipNow())
        pause(0.002)   // the clock moves on, so the next record's time, and its name, differs
        try insert(pool, count: 1)
        let shipped = try XCTUnwrap(try pool.continuousBackup?.shipNow())
        let catalog = try BackupCatalog(storage)
        XCTAssertEqual(catalog.superseded.count, 1, "the failed write's object is not there: the test proves little")
        let restored = dir.appendingPathComponent("restored.db").path
        let result = try ContinuousBackup.restore(from: storage, key: key, to: restored)
        XCTAssertEqual(result.commit, shipped.commit)
        XCTAssertNil(result.problem)
        try checkRestored(restored, rows: 2)
        try pool.close()
    }

    /// A backup stopped by hand lets the pool's writer start the WAL over again.
    func testAPoolWhoseBackupWasStoppedKeepsItsWALBounded() throws {
        let dir = try makeTemporaryDirectory(self)
        let (pool, _) = try makePool(dir)
        try pool.continuousBackup?.stop()
        try insert(pool, count: 6_000)
        let walBytes = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: pool.path + "-wal")[.size] as? Int)
        // The mark, and what the writer adds while a round ships what is past a commit's 1 MiB tail.
        XCTAssertLessThan(walBytes, 6_000 * 4_120, "the WAL grew past the restart mark")
        try pool.close()
    }

    /// A continuous backup in another process (here another instance, on
    /// connections of its own) always holds a read, which a pool's RESTART
    /// would wait the busy timeout for in every commit past 4,000 frames: it
    /// waits 100 ms at most, and then less and less often.
    func testAPoolBesideAnotherProcesssBackupDoesNotWaitForItInEveryCommit() throws {
        let dir = try makeTemporaryDirectory(self)
        var options = Database.Options()
        options.busyTimeout = .seconds(30)
        let pool = try DatabasePool(path: dir.appendingPathComponent("app.db").path, key: key, options: options)
        try pool.write { db in try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)") }
        var backupOptions = ContinuousBackup.Options()
        backupOptions.interval = .milliseconds(50)
        let storage = try DirectoryBackupStorage(path: dir.appendingPathComponent("destination").path)
        let outside = try ContinuousBackup(path: pool.path, key: key, storage: storage, options: backupOptions)
        let started = Date()
        try insert(pool, count: 6_000)
        // Waiting 30 s in each commit past 4,000 frames would take hours; 100 ms a few times, seconds.
        XCTAssertLessThan(Date().timeIntervalSince(started), 120, "commits waited for the other backup's read")
        XCTAssertLessThan(pool.checkpointer.restartsWaitedInVain, 12)
        let last = try XCTUnwrap(try outside.shipNow())
        try outside.stop()
        try checkLatest(storage, in: dir, commit: last.commit, rows: 6_000)
        try pool.close()
    }

    /// A pool whose own backup restarts the WAL, beside a connection of
    /// another process that holds its read: the RESTART waits 100 ms at
    /// most for that read, then less and less often, not the busy timeout
    /// in every commit; and every commit is still shipped.
    func testAPoolsBackupDoesNotWaitForAnotherConnectionsReadInEveryCommit() throws {
        let dir = try makeTemporaryDirectory(self)
        var options = Database.Options()
        options.busyTimeout = .seconds(30)
        let storage = try DirectoryBackupStorage(path: dir.appendingPathComponent("destination").path)
        var manual = ContinuousBackup.Options()
        manual.interval = .seconds(3600)
        options.continuousBackup = .init(storage: storage, options: manual)
        let pool = try DatabasePool(path: dir.appendingPathComponent("app.db").path, key: key, options: options)
        try pool.write { db in try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)") }
        let outsider = try Database(path: pool.path, key: key)
        try outsider.execute("BEGIN")
        XCTAssertEqual(try outsider.fetchScalar(Int.self, "SELECT count(*) FROM item"), 0)
        let started = Date()
        try insert(pool, count: 6_000)
        // Waiting 30 s in each commit past 4,000 frames would take hours; 100 ms a few times, seconds.
        XCTAssertLessThan(Date().timeIntervalSince(started), 120, "commits waited for the other connection's read")
        XCTAssertGreaterThan(pool.checkpointer.restartsWaitedInVain, 0, "no RESTART was tried beside the read")
        XCTAssertLessThan(pool.checkpointer.restartsWaitedInVain, 12)
        try outsider.execute("COMMIT")
        outsider.close()
        let last = try XCTUnwrap(try pool.continuousBackup?.shipNow())
        // A RESTART that found the read leaves the log, which holds no commit
        // past the shipping: no snapshot but the first is needed.
        XCTAssertEqual(try storage.list().filter { $0.contains("-snapshot-") && $0.hasSuffix("-last") }.count, 1)
        try checkLatest(storage, in: dir, commit: last.commit, rows: 6_000)
        try pool.close()
    }

    /// Closing the pool ships the last commits; a pool opened again on the
    /// same destination continues the backup, and after commits no backup
    /// saw (another connection's, with the WAL checkpointed away), starts
    /// over with a snapshot: every earlier commit can still be restored.
    func testContinuesAfterReopeningAndStartsOverAfterUnseenCommits() throws {
        let dir = try makeTemporaryDirectory(self)
        var (pool, storage) = try makePool(dir)
        try insert(pool, count: 5)
        try pool.close()
        let afterClose = try XCTUnwrap(try lastCommit(storage))

        let plain = try Database(path: pool.path, key: key)
        try plain.execute("INSERT INTO item(body) VALUES ('unseen')")
        plain.close()
        (pool, storage) = try makePool(dir)
        try insert(pool, count: 2)
        let end = try XCTUnwrap(try pool.continuousBackup?.shipNow())
        try pool.close()

        let early = dir.appendingPathComponent("early.db").path
        try ContinuousBackup.restore(from: storage, key: key, to: early, target: .commit(afterClose))
        try checkRestored(early, rows: 5)
        let latest = dir.appendingPathComponent("latest.db").path
        XCTAssertGreaterThanOrEqual(try ContinuousBackup.restore(from: storage, key: key, to: latest).commit, end.commit)
        try checkRestored(latest, rows: 8)
    }

    /// Timed rounds ship without being asked.
    func testShipsOnItsOwnEveryInterval() throws {
        let dir = try makeTemporaryDirectory(self)
        let rounds = Mutex<[UInt64]>([])
        var options = ContinuousBackup.Options()
        options.interval = .milliseconds(20)
        options.shipped = { commit in rounds.withLock { $0.append(commit.commit) } }
        let (pool, storage) = try makePool(dir, options: options)
        try insert(pool, count: 1)
        // The schema's commit may ship before the insert: wait until nothing committed is left to ship.
        assertEventually("no round shipped the commit", timeout: 10) {
            !rounds.withLock { $0 }.isEmpty && (try? pool.continuousBackup?.lag().commits) == 0
        }
        let restored = dir.appendingPathComponent("restored.db").path
        try ContinuousBackup.restore(from: storage, key: key, to: restored)
        try checkRestored(restored, rows: 1)
        try pool.close()
    }

    // MARK: - Implementations we did not write

    /// A database restored from a continuous backup opens in `sqlcipher3`
    /// (SQLCipher 4.x from PyPI) and in the engine's own `sqlcipher` shell
    /// (4.x engines; Debian 12's 3.4.1 shell reads SQLCipher 3 files only).
    func testARestoredDatabaseOpensInSQLCipher4Peers() throws {
        let (storage, dir, commits) = try makeBackup()
        let restored = dir.appendingPathComponent("restored.db").path
        try ContinuousBackup.restore(from: storage, key: key, to: restored)
        let rows = commits.last!.rows
        XCTAssertEqual(try runPeer(restored, key: TestKeys.text(named: "continuous backup test key"), """
            import sqlcipher3
            db = sqlcipher3.connect(path)
            db.execute('PRAGMA key = "' + key + '"')
            print(db.execute('PRAGMA integrity_check').fetchone()[0], db.execute('SELECT count(*) FROM item').fetchone()[0])
            """), "ok \(rows)\n")
        try skipUnless(shellIsSQLCipher4, "Debian 12's 3.4.1 shell reads SQLCipher 3 files only")
        XCTAssertEqual(try runSQLCipherShell(restored, "PRAGMA key = \"\(TestKeys.text(named: "continuous backup test key"))\";\nPRAGMA integrity_check;\nSELECT count(*) FROM item;\n",
                                             defaults: .own), "ok\n\(rows)\n")
    }

    // MARK: - What the destination holds

    /// No file at the destination holds a row's text, the passphrase, or the
    /// key derived from it.
    func testTheDestinationHoldsNoKeyAndNoPlaintext() throws {
        let dir = try makeTemporaryDirectory(self)
        let (pool, storage) = try makePool(dir)
        try insert(pool, count: 200)
        try pool.continuousBackup?.shipNow()
        try pool.close()
        let needles = try secretsABackupMustNotHold(pool.path, key: key, passphrase: "continuous backup test key", marker: Self.marker)
        let names = try FileManager.default.contentsOfDirectory(atPath: storage.path)
        XCTAssertGreaterThan(names.count, 1)
        for name in names {
            let data = try Data(contentsOf: URL(fileURLWithPath: storage.path).appendingPathComponent(name))
            for needle in needles { XCTAssertNil(data.range(of: needle), "\(name) holds a secret or a row") }
        }
        // The control: the marker is findable where it is in the clear.
        let plain = dir.appendingPathComponent("plain.db").path
        try DatabaseEncryption.decrypt(pool.path, key: key, to: plain)
        XCTAssertNotNil(try Data(contentsOf: URL(fileURLWithPath: plain)).range(of: Data(Self.marker.utf8)))
    }

    // MARK: - What a restore detects

    func testAMissingRecordIsNamedAndTheCommitBeforeItRestored() throws {
        let (storage, dir, commits) = try makeBackup()
        let frames = try BackupCatalog(storage).entries.filter { $0.kind == .frames }
        let removed = frames[2]
        try storage.delete(removed.name)
        let restored = dir.appendingPathComponent("restored.db").path
        let result = try ContinuousBackup.restore(from: storage, key: key, to: restored)
        XCTAssertEqual(result.problem, "record \(removed.number) is missing")
        XCTAssertLessThan(result.commit, commits.last!.commit)
        try checkRestored(restored, rows: commits.first { $0.commit == result.commit }!.rows)
        XCTAssertThrowsError(try ContinuousBackup.restore(from: storage, key: key, to: dir.appendingPathComponent("x.db").path,
                                                          target: .commit(commits.last!.commit))) { error in
            guard case .noSuchCommit? = error as? BackupError else { return XCTFail("\(error)") }
        }
    }

    func testReorderedReplayedAndCutShortRecordsAreDetected() throws {
        // What the site can do: write any file, over any record (a put never replaces one).
        func overwrite(_ storage: DirectoryBackupStorage, _ name: String, _ data: Data) throws {
            try data.write(to: URL(fileURLWithPath: storage.path).appendingPathComponent(name))
        }
        let cases: [(String, (DirectoryBackupStorage, [BackupCatalog.Entry]) throws -> Void, String)] = [
            ("swapped", { storage, frames in
                let a = try storage.get(frames[1].name), b = try storage.get(frames[2].name)
                try overwrite(storage, frames[1].name, b)
                try overwrite(storage, frames[2].name, a)
            }, "not the one its name says"),
            ("replayed", { storage, frames in
                try overwrite(storage, frames[2].name, try storage.get(frames[1].name))
            }, "not the one its name says"),
            ("cut short", { storage, frames in
                try overwrite(storage, frames[2].name, try storage.get(frames[2].name).dropLast(100))
            }, "cut short or changed"),
            ("changed", { storage, frames in
                var data = try storage.get(frames[2].name)
                data[data.count - 10] ^= 1
                try overwrite(storage, frames[2].name, data)
            }, "cut short or changed"),
            ("header changed", { storage, frames in
                var data = try storage.get(frames[2].name)
                data[33] ^= 1
                try overwrite(storage, frames[2].name, data)
            }, "header does not authenticate"),
        ]
        for (label, damage, says) in cases {
            let (storage, dir, commits) = try makeBackup()
            let frames = try BackupCatalog(storage).entries.filter { $0.kind == .frames }
            try damage(storage, frames)
            let restored = dir.appendingPathComponent("restored.db").path
            let result = try ContinuousBackup.restore(from: storage, key: key, to: restored)
            XCTAssertTrue(result.problem?.contains(says) == true, "\(label): \(result.problem ?? "no problem found")")
            XCTAssertTrue(result.problem?.contains("record \(frames[label == "swapped" ? 1 : 2].number)") == true, "\(label): \(result.problem ?? "")")
            XCTAssertLessThan(result.commit, commits.last!.commit, label)
            try checkRestored(restored, rows: commits.first { $0.commit == result.commit }!.rows)
        }
    }

    func testWrongKeyAndNoBackupAreTheirOwnErrors() throws {
        let (storage, dir, _) = try makeBackup()
        let restored = dir.appendingPathComponent("restored.db").path
        XCTAssertThrowsError(try ContinuousBackup.restore(from: storage, key: .named("not the key"), to: restored)) { error in
            XCTAssertEqual(error as? BackupError, .wrongKey(location: storage.path))
        }
        let empty = try DirectoryBackupStorage(path: dir.appendingPathComponent("empty").path)
        XCTAssertThrowsError(try ContinuousBackup.restore(from: empty, key: key, to: restored)) { error in
            XCTAssertEqual(error as? BackupError, .noBackup(location: empty.path))
        }
        // Another database's backup there is refused, not mixed in.
        let other = try DatabasePool(path: dir.appendingPathComponent("other.db").path, key: .named("other key"))
        try other.write { db in try db.execute("CREATE TABLE t(x)") }
        try other.close()
        XCTAssertThrowsError(try ContinuousBackup(path: dir.appendingPathComponent("other.db").path, key: .named("other key"),
                                                  storage: storage)) { error in
            XCTAssertEqual(error as? BackupError, .wrongKey(location: storage.path))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: restored))
    }

    func testPlaintextPoolsAndKeyChangesAreRefused() throws {
        let dir = try makeTemporaryDirectory(self)
        var options = Database.Options()
        options.continuousBackup = .init(storage: try DirectoryBackupStorage(path: dir.appendingPathComponent("dest").path))
        XCTAssertThrowsError(try DatabasePool(path: dir.appendingPathComponent("plain.db").path, options: options)) { error in
            guard case .misuse? = error as? DatabaseError else { return XCTFail("\(error)") }
        }
        let (pool, _) = try makePool(dir)
        XCTAssertThrowsError(try pool.changeKey(to: .named("new"))) { error in
            guard case .misuse? = error as? DatabaseError else { return XCTFail("\(error)") }
        }
        try insert(pool, count: 1)
        try pool.close()
    }

    /// A destination that fills up fails the round with its own error; the
    /// pool goes on, the unshipped frames stay in the WAL, and once there is
    /// room every commit is shipped.
    func testAFullDestinationLosesNothing() throws {
        let dir = try makeTemporaryDirectory(self)
        let mountPoint = try mountSmallDisk(self, in: dir, size: "8m")
        let storage = try DirectoryBackupStorage(path: mountPoint.path)
        var backupOptions = ContinuousBackup.Options()
        backupOptions.interval = .seconds(3600)
        var options = Database.Options()
        options.continuousBackup = .init(storage: storage, options: backupOptions)
        let pool = try DatabasePool(path: dir.appendingPathComponent("app.db").path, key: key, options: options)
        try pool.write { db in try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)") }
        try pool.continuousBackup?.shipNow()
        let filler = mountPoint.appendingPathComponent("filler").path
        XCTAssertTrue(FileManager.default.createFile(atPath: filler, contents: Data(count: 7 * 1024 * 1024 + 512 * 1024)))
        try insert(pool, count: 400)
        XCTAssertThrowsError(try pool.continuousBackup?.shipNow()) { error in
            XCTAssertEqual(error as? BackupError, .destinationFull(location: mountPoint.path))
        }
        try insert(pool, count: 1)
        _ = try pool.checkpoint(.passive)
        try insert(pool, count: 1)
        try FileManager.default.removeItem(atPath: filler)
        let final = try XCTUnwrap(try pool.continuousBackup?.shipNow())
        try checkLatest(storage, in: dir, commit: final.commit, rows: 402)
        try pool.close()
    }

    // MARK: - Helpers

    private func makePool(_ dir: URL, options backupOptions: ContinuousBackup.Options? = nil) throws -> (DatabasePool, DirectoryBackupStorage) {
        let storage = try DirectoryBackupStorage(path: dir.appendingPathComponent("destination").path)
        var manual = ContinuousBackup.Options()
        manual.interval = .seconds(3600)
        var options = Database.Options()
        options.continuousBackup = .init(storage: storage, options: backupOptions ?? manual)
        let pool = try TestFixtures.makePool(dir.appendingPathComponent("app.db").path, key: key, options: options,
                                             schema: "CREATE TABLE IF NOT EXISTS item(id INTEGER PRIMARY KEY, body TEXT)")
        return (pool, storage)
    }

    /// A backup of 8 rounds of one row each: the commits and the rows each had.
    private func makeBackup() throws -> (DirectoryBackupStorage, URL, [(commit: UInt64, rows: Int)]) {
        let dir = try makeTemporaryDirectory(self)
        let (pool, storage) = try makePool(dir)
        var commits: [(UInt64, Int)] = [(try XCTUnwrap(try pool.continuousBackup?.shipNow()).commit, 0)]
        for _ in 0..<8 {
            try insert(pool, count: 1)
            commits.append((try XCTUnwrap(try pool.continuousBackup?.shipNow()).commit, try count(pool)))
        }
        try pool.close()
        return (storage, dir, commits)
    }

    private func insert(_ pool: DatabasePool, count: Int) throws {
        for _ in 0..<count {
            try pool.write { db in try db.execute("INSERT INTO item(body) VALUES (? || hex(randomblob(100)))", [Self.marker]) }
        }
    }

    private func count(_ pool: DatabasePool) throws -> Int {
        try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM item") ?? 0 }
    }

    private func lastCommit(_ storage: DirectoryBackupStorage) throws -> UInt64? {
        let restored = try makeTemporaryDirectory(self).appendingPathComponent("probe.db").path
        return try ContinuousBackup.restore(from: storage, key: key, to: restored).commit
    }

    private func walCheckpointSequence(_ path: String) throws -> UInt32? {
        try CommittedFrames.generation(of: path + "-wal")?.checkpointSequence
    }

    /// Restores the latest commit from `storage` into `dir`, and checks it is `commit`, whole, with `rows` rows.
    private func checkLatest(_ storage: any BackupStorage, in dir: URL, commit: UInt64, rows: Int,
                             file: StaticString = #filePath, line: UInt = #line) throws {
        let restored = dir.appendingPathComponent("restored.db").path
        XCTAssertEqual(try ContinuousBackup.restore(from: storage, key: key, to: restored).commit, commit, file: file, line: line)
        try checkRestored(restored, rows: rows, file: file, line: line)
    }

    private func checkRestored(_ path: String, rows: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        var options = Database.Options()
        options.readOnly = true
        let db = try Database(path: path, key: key, options: options)
        defer { db.close() }
        XCTAssertEqual(try db.integrityProblems(), [], file: file, line: line)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM item"), rows, file: file, line: line)
    }
}

/// A directory whose next write, when asked, stores the object and then
/// fails, as a rename done before a failed flush of the directory does.
private final class FailingAfterStoring: BackupStorage, @unchecked Sendable {
    private let directory: DirectoryBackupStorage
    private let failing = Mutex(false)
    var location: String { directory.location }

    init(_ directory: DirectoryBackupStorage) { self.directory = directory }

    func failNext() { failing.withLock { $0 = true } }

    func put(_ name: String, _ data: Data) throws {
        try directory.put(name, data)
        let fail = failing.withLock { state -> Bool in
            defer { state = false }
            return state
        }
        if fail {
            throw BackupError.storageFailed(location: location, reason: "flushing the directory failed")
        }
    }

    func get(_ name: String) throws -> Data { try directory.get(name) }
    func list() throws -> [String] { try directory.list() }
    func delete(_ name: String) throws { try directory.delete(name) }
    func claimWriting() throws -> BackupWriterClaim { try directory.claimWriting() }
}

/// The real directory, where the first read of `victim` finds it pruned, as
/// a backup running beside a restore prunes it between its listing and its
/// reading.
private final class PrunedWhileRead: BackupStorage, @unchecked Sendable {
    private let directory: DirectoryBackupStorage
    private let victim: String
    private let done = Mutex(false)
    var location: String { directory.location }
    var pruned: Bool { done.withLock { $0 } }

    init(_ directory: DirectoryBackupStorage, victim: String) {
        (self.directory, self.victim) = (directory, victim)
    }

    func get(_ name: String) throws -> Data {
        let prune = name == victim && done.withLock { state in
            defer { state = true }
            return !state
        }
        if prune { try directory.delete(name) }
        return try directory.get(name)
    }
    func put(_ name: String, _ data: Data) throws { try directory.put(name, data) }
    func list() throws -> [String] { try directory.list() }
    func delete(_ name: String) throws { try directory.delete(name) }
    func claimWriting() throws -> BackupWriterClaim { try directory.claimWriting() }
}
