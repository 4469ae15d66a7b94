import Foundation
import Synchronization
import TestFixtures
import XCTest
@testable import DBCrypt

/// `backup(to:key:cipher:options:)` on a pool and a queue: one committed
/// state, written while the app goes on; who waits for it; the copy's key;
/// the routines' discipline (refusals, cancellation, a full disk, kills).
final class DatabaseBackupTests: XCTestCase {
    let key = DatabaseKey.named("backup test key")
    static let rows = 300

    // MARK: - One committed state while writes go on

    /// The copy's snapshot is fixed when progress first reports: a commit
    /// made then, on another thread, completes while the backup reads
    /// (writers do not wait), and is not in the copy.
    func testPoolBackupIsOneCommitWhileWritersGoOn() throws {
        let dir = try makeTemporaryDirectory(self)
        let pool = try makePool(dir)
        let copy = dir.appendingPathComponent("copy.db").path
        let committedDuringBackup = Mutex(false)
        var options = ExportOptions()
        options.progress = { progress in
            guard progress.completed == 0 else { return }
            committedDuringBackup.withLock { $0 = Self.commitOnAnotherThread(pool, waiting: 10) }
        }
        try pool.backup(to: copy, options: options)

        XCTAssertTrue(committedDuringBackup.withLock { $0 }, "a commit waited for the backup")
        XCTAssertEqual(try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM item") }, Self.rows + 1)
        try checkCopy(copy, key: key, rows: Self.rows)
    }

    /// While the backup holds its snapshot, commits that fill the WAL past
    /// the pool's restart mark do not restart it (which would wait for the
    /// backup's read in every commit, up to the busy timeout).
    func testPoolBackupKeepsCommitsFromWaitingToRestartTheWAL() throws {
        let dir = try makeTemporaryDirectory(self)
        let pool = try makePool(dir)
        let copy = dir.appendingPathComponent("copy.db").path
        let commits = Mutex(0)
        var options = ExportOptions()
        options.progress = { progress in
            guard progress.completed == 0 else { return }
            // About 9 frames per commit: 4,500 frames, past the 4,000 that restart the WAL.
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                for _ in 0..<500 {
                    guard (try? pool.write({ db in try db.execute("INSERT INTO blob(b) VALUES (randomblob(32000))") })) != nil else { break }
                    commits.withLock { $0 += 1 }
                }
                done.signal()
            }
            _ = done.wait(timeout: .now() + 120)
        }
        try pool.backup(to: copy, options: options)

        XCTAssertEqual(commits.withLock { $0 }, 500)
        XCTAssertGreaterThan(pool.checkpointer.restartsSkipped, 0, "the commits never reached the restart mark: the test proves nothing")
        try checkCopy(copy, key: key, rows: Self.rows)
        // Once the backup is done, the WAL restarts again.
        try pool.write { db in try db.execute("INSERT INTO blob(b) VALUES (randomblob(32000))") }
        XCTAssertTrue(try pool.checkpoint(.truncate))
    }

    /// With a rollback journal, the copy is one state because writers wait:
    /// another connection's commit is refused (busy) while the copy is read.
    func testQueueWithRollbackJournalKeepsOtherWritersWaitingForTheCopy() throws {
        let dir = try makeTemporaryDirectory(self)
        let queue = try makeQueue(dir, journalMode: .default)
        let copy = dir.appendingPathComponent("copy.db").path
        let other = try DatabaseQueue(path: queue.path, key: key, options: noWaiting)
        let refused = Mutex<Int32?>(nil)
        var options = ExportOptions()
        options.progress = { progress in
            guard progress.completed == 0 else { return }
            do {
                try other.inDatabase { db in try db.execute("INSERT INTO item(n) VALUES (-1)") }
            } catch let error as DatabaseError {
                refused.withLock { $0 = error.resultCode }
            } catch {}
        }
        try queue.backup(to: copy, options: options)

        XCTAssertEqual(refused.withLock { $0 }, 5, "another connection committed during a rollback-mode backup")
        try other.inDatabase { db in try db.execute("INSERT INTO item(n) VALUES (-1)") }
        try other.close()
        try checkCopy(copy, key: key, rows: Self.rows)
    }

    /// With a rollback journal, beside a writer that commits without pausing,
    /// the copy's read lands between two of its commits: SQLite's own busy
    /// handler, sleeping up to 100 ms between tries, failed 2 times in 3.
    func testQueueWithRollbackJournalBacksUpBesideAWriterThatNeverPauses() throws {
        let dir = try makeTemporaryDirectory(self)
        let queue = try makeQueue(dir, journalMode: .default)
        let writer = try DatabaseQueue(path: queue.path, key: key)
        let stop = Mutex(false), commits = Mutex(0)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { done.signal() }
            while !stop.withLock({ $0 }) {
                if (try? writer.inDatabase { db in try db.execute("INSERT INTO item(n) VALUES (-1)") }) != nil { commits.withLock { $0 += 1 } }
            }
        }
        XCTAssertTrue(waitUntil(timeout: 10) { commits.withLock { $0 } > 20 }, "the writer does not commit")
        var options = ExportOptions()
        options.busyTimeout = .seconds(2)
        for round in 0..<3 {
            let before = commits.withLock { $0 }
            let copy = dir.appendingPathComponent("copy-\(round).db").path
            XCTAssertNoThrow(try queue.backup(to: copy, options: options), "round \(round)")
            XCTAssertTrue(waitUntil(timeout: 10) { commits.withLock { $0 } > before + 5 }, "the writer stopped committing")
            let db = try Database(path: copy, key: key)
            XCTAssertEqual(try db.integrityProblems(), [])
            db.close()
        }
        stop.withLock { $0 = true }
        done.wait()
        try writer.close()
    }

    /// In WAL mode a queue's copy is a read snapshot: another connection
    /// commits meanwhile, and the copy does not have its row.
    func testQueueInWALModeLetsOtherConnectionsCommitDuringTheCopy() throws {
        let dir = try makeTemporaryDirectory(self)
        let queue = try makeQueue(dir, journalMode: .wal)
        let copy = dir.appendingPathComponent("copy.db").path
        let other = try DatabaseQueue(path: queue.path, key: key, options: noWaiting)
        let committed = Mutex(false)
        var options = ExportOptions()
        options.progress = { progress in
            guard progress.completed == 0 else { return }
            let ok = (try? other.write { db in try db.execute("INSERT INTO item(n) VALUES (-1); UPDATE tally SET total = total + 1") }) != nil
            committed.withLock { $0 = ok }
        }
        try queue.backup(to: copy, options: options)
        try other.close()

        XCTAssertTrue(committed.withLock { $0 })
        try checkCopy(copy, key: key, rows: Self.rows)
    }

    // MARK: - The copy's key

    /// The default keeps the key, the settings and the salt: the passphrase opens the copy.
    func testBackupWithTheDatabasesKeyOpensWithItsPassphrase() throws {
        let dir = try makeTemporaryDirectory(self)
        let pool = try makePool(dir)
        let copy = dir.appendingPathComponent("copy.db").path
        try pool.backup(to: copy)
        try checkCopy(copy, key: key, rows: Self.rows)
        XCTAssertEqual(try fileHeader(copy), try fileHeader(pool.path), "the copy has another salt")
        XCTAssertEqual(try filePermissions(copy), 0o600)
    }

    func testBackupWithAnotherKeyAndFormat() throws {
        let dir = try makeTemporaryDirectory(self)
        let pool = try makePool(dir)
        let copy = dir.appendingPathComponent("copy.db").path
        let other = DatabaseKey.named("the backup's own key")
        try pool.backup(to: copy, key: .using(other), cipher: .sqlcipher3)

        var sqlcipher3 = Database.Options()
        sqlcipher3.cipher = .sqlcipher3
        sqlcipher3.tryOtherFormat = false
        try checkCopy(copy, key: other, options: sqlcipher3, rows: Self.rows)
        XCTAssertThrowsError(try Database(path: copy, key: key, options: sqlcipher3)) { error in
            XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: copy))
        }
    }

    func testPlaintextBackupOnlyWhenAskedForByName() throws {
        let dir = try makeTemporaryDirectory(self)
        let pool = try makePool(dir)
        let copy = dir.appendingPathComponent("copy.db").path
        try pool.backup(to: copy, key: .plaintext)
        guard case .plaintext = try FileFormat.detect(at: copy) else { return XCTFail("the copy is not plaintext") }
        try checkCopy(copy, key: nil, rows: Self.rows)

        // A plaintext database's copy with its own "key" is plaintext too.
        let plain = try DatabaseQueue(path: copy)
        let plainCopy = dir.appendingPathComponent("plain-copy.db").path
        try plain.backup(to: plainCopy)
        guard case .plaintext = try FileFormat.detect(at: plainCopy) else { return XCTFail("the copy is not plaintext") }
    }

    func testCipherSettingsWithoutAKeyOfTheirOwnAreRefused() throws {
        let dir = try makeTemporaryDirectory(self)
        let pool = try makePool(dir)
        let copy = dir.appendingPathComponent("copy.db").path
        for key in [BackupEncryption.sameAsDatabase, .plaintext] {
            XCTAssertThrowsError(try pool.backup(to: copy, key: key, cipher: .sqlcipher3)) { error in
                guard case .misuse? = error as? DatabaseError else { return XCTFail("\(error)") }
            }
        }
        XCTAssertThrowsError(try pool.backup(to: copy, key: .using(.passphrase("")))) { error in
            guard case .invalidKey? = error as? CipherError else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try EncryptionFixture.files(in: dir).filter { $0.hasPrefix("copy") || $0.hasPrefix(".copy") }, [])
    }

    // MARK: - The routines' discipline

    func testBackupRefusesAnExistingFileAndItsOwnDatabase() throws {
        let dir = try makeTemporaryDirectory(self)
        let pool = try makePool(dir)
        let copy = dir.appendingPathComponent("copy.db").path
        XCTAssertTrue(FileManager.default.createFile(atPath: copy, contents: Data("keep me".utf8)))
        XCTAssertThrowsError(try pool.backup(to: copy)) { error in
            XCTAssertEqual(error as? DatabaseError, .destinationExists(path: copy))
        }
        XCTAssertEqual(FileManager.default.contents(atPath: copy), Data("keep me".utf8))
        var replacing = ExportOptions()
        replacing.replaceExisting = true
        try pool.backup(to: copy, options: replacing)
        try checkCopy(copy, key: key, rows: Self.rows)

        let link = dir.appendingPathComponent("link.db").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: pool.path)
        for destination in [pool.path, link] {
            XCTAssertThrowsError(try pool.backup(to: destination, options: replacing)) { error in
                XCTAssertEqual(error as? DatabaseError, .destinationIsSource(path: destination))
            }
        }
        XCTAssertEqual(try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM item") }, Self.rows)
    }

    /// SQLite keeps the log of a database opened through a symbolic link
    /// beside the link's target. A backup through the link copies the
    /// commits still in that log (it used to copy the main file alone).
    func testBackupThroughASymbolicLinkCopiesTheCommitsInTheTargetsLog() throws {
        let dir = try makeTemporaryDirectory(self)
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("data"), withIntermediateDirectories: false)
        let link = dir.appendingPathComponent("app.db").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "data/real.db")
        var wal = Database.Options()
        wal.journalMode = .wal
        let writer = try Database(path: link, key: key, options: wal)
        defer { writer.close() }
        try writer.execute("PRAGMA wal_autocheckpoint = 0; CREATE TABLE item(x); INSERT INTO item VALUES (1), (2), (3)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: link + "-wal"))
        XCTAssertEqual(CompanionFile.wal.path(of: link), try FilePaths.target(of: link) + "-wal")
        XCTAssertTrue(WriteAheadLogFile.hasFrames(besideDatabaseAt: link), "the commits are in the log beside data/real.db")

        let queue = try DatabaseQueue(path: link, key: key)
        let copy = dir.appendingPathComponent("copy.db").path
        try queue.backup(to: copy)
        try queue.close()
        let db = try Database(path: copy, key: key)
        defer { db.close() }
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM item"), 3)
    }

    func testCancelledBackupLeavesNoFile() throws {
        let dir = try makeTemporaryDirectory(self)
        let pool = try makePool(dir)
        let copy = dir.appendingPathComponent("copy.db").path
        let cancellation = JobCancellation()
        var options = ExportOptions()
        options.cancellation = cancellation
        options.progress = { _ in cancellation.cancel() }
        XCTAssertThrowsError(try pool.backup(to: copy, options: options)) { error in
            XCTAssertEqual(error as? DatabaseError, .cancelled)
        }
        XCTAssertEqual(try EncryptionFixture.files(in: dir).filter { $0.hasPrefix("copy") || $0.hasPrefix(".copy") }, [])
    }

    /// Calling the pool from inside its own closure, or after closing it, is reported.
    func testBackupFromInsideThePoolOrAfterClosingIsReported() throws {
        let dir = try makeTemporaryDirectory(self)
        let pool = try makePool(dir)
        let copy = dir.appendingPathComponent("copy.db").path
        XCTAssertThrowsError(try pool.write { _ in try pool.backup(to: copy) }) { error in
            XCTAssertEqual(error as? DatabaseError, .reentrantQueueAccess)
        }
        let queue = try makeQueue(try makeTemporaryDirectory(self), journalMode: .wal)
        XCTAssertThrowsError(try queue.read { _ in try queue.backup(to: copy) }) { error in
            XCTAssertEqual(error as? DatabaseError, .reentrantQueueAccess)
        }
        try pool.close()
        XCTAssertThrowsError(try pool.backup(to: copy)) { error in
            XCTAssertEqual(error as? DatabaseError, .connectionClosed)
        }
    }

    /// A pool that keeps other processes out opens its snapshot through the
    /// process's shared lock.
    func testBackupOfAPoolExclusiveToThisProcess() throws {
        let dir = try makeTemporaryDirectory(self)
        var exclusive = Database.Options()
        exclusive.exclusiveToThisProcess = true
        let pool = try makePool(dir, options: exclusive)
        let copy = dir.appendingPathComponent("copy.db").path
        try pool.backup(to: copy)
        try checkCopy(copy, key: key, rows: Self.rows)
    }

    /// A 2 MiB tmpfs with room for the up-front check (1.2 times the
    /// database) but not for the copy: rows of 500 bytes share 4 KiB pages
    /// in the database and take a whole 1 KiB page each in a SQLCipher 3
    /// copy. The full disk is its own error, every time, and nothing is left
    /// on it; with less room than the check asks, nothing is written at all.
    func testFullDestinationDiskIsReportedAndLeavesNothing() throws {
        let dir = try makeTemporaryDirectory(self)
        let mountPoint = try mountSmallDisk(self, in: dir, size: "2m")
        let pool = try makePool(dir)
        try pool.write { db in
            for _ in 0..<2_500 { try db.execute("INSERT INTO blob(b) VALUES (randomblob(500))") }
        }
        let copy = mountPoint.appendingPathComponent("copy.db").path
        for attempt in 0..<3 {
            XCTAssertThrowsError(try pool.backup(to: copy, key: .using(key), cipher: .sqlcipher3), "attempt \(attempt)") { error in
                XCTAssertEqual(error as? DatabaseError, .diskFull(path: copy))
            }
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mountPoint.path), [])
        }
        let filler = mountPoint.appendingPathComponent("filler").path
        XCTAssertTrue(FileManager.default.createFile(atPath: filler, contents: Data(count: 1 << 20)))
        XCTAssertThrowsError(try pool.backup(to: copy)) { error in
            guard case .insufficientSpace? = error as? DatabaseError else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mountPoint.path), ["filler"])
    }

    /// SIGKILL of a process backing up, at random moments, when its copy
    /// appears, just before and right after the rename, and before the
    /// directory's sync that makes the rename durable: the copy's path holds nothing or
    /// the complete copy, the database is untouched, and the next run
    /// removes what the killed ones left.
    func testKilledBackupLeavesNoCopyOrTheWholeCopy() throws {
        let dir = try makeTemporaryDirectory(self)
        let pool = try makePool(dir, rows: 20_000)
        try pool.close()
        let path = dir.appendingPathComponent("app.db").path
        let copy = dir.appendingPathComponent("copy.db").path
        let keys = ["DBCRYPT_TEST_KEY": TestKeys.text(named: "backup test key")]
        let started = Date()
        let timing = try startTestHelper(["backup", path, copy], keys: keys).finish()
        XCTAssertEqual(timing.status, 0, timing.stderr)
        let duration = Date().timeIntervalSince(started)
        try FileManager.default.removeItem(atPath: copy)

        let target = KillTarget.testHelper(["backup", path, copy], keys: keys)
        let syncs = try target.fsyncsBeforeFirstRename()
        try FileManager.default.removeItem(atPath: copy)
        let points: [(KillPoint, expected: KillOutcome?)] = Array(repeating: (.random, nil), count: KillCampaign.kills(quick: 2, full: 10))
            + Array(repeating: (.fileAppears(directory: dir.path, prefix: ".copy.db.dbcrypt-"), .original), count: KillCampaign.kills(quick: 1, full: 3))
            + Array(repeating: (.beforeRename, .original), count: KillCampaign.kills(quick: 1, full: 1))
            + Array(repeating: (.pathReplaced(copy), .replaced), count: KillCampaign.kills(quick: 1, full: 3))
            + Array(repeating: (.beforeSyscall("fsync", occurrence: syncs + 1), .replaced), count: KillCampaign.kills(quick: 1, full: 1))
        let tally = try killAtEach(points, typicalDuration: duration, target: target,
                                   state: {
            try checkCopy(path, key: key, rows: 20_000)
            guard FileManager.default.fileExists(atPath: copy) else { return .original }
            try checkCopy(copy, key: key, rows: 20_000)
            return .replaced
        }, restore: { removeDatabaseFiles(copy) })
        XCTAssertGreaterThan(tally[.original]!, 0, "no kill landed before the rename: the test proves little")
        print("backup: \(points.count) kills within \(Int(duration * 1000)) ms runs: "
              + "\(tally[.original]!) left no copy, \(tally[.replaced]!) the whole copy")

        XCTAssertEqual(try startTestHelper(["backup", path, copy], keys: keys).finish().status, 0)
        XCTAssertEqual(try EncryptionFixture.files(in: dir).filter { $0.hasPrefix(".copy.db") }, [])
        try checkCopy(copy, key: key, rows: 20_000)
    }

    // MARK: - Helpers

    /// A pool on `app.db` whose `item` table has `rows` rows, counted in
    /// `tally` by the same transactions (the copy's invariant).
    private func makePool(_ dir: URL, rows: Int = DatabaseBackupTests.rows, options: Database.Options = Database.Options()) throws -> DatabasePool {
        let pool = try TestFixtures.makePool(dir.appendingPathComponent("app.db").path, key: key, options: options)
        try pool.write { db in try Self.fill(db, rows: rows) }
        return pool
    }

    private func makeQueue(_ dir: URL, journalMode: Database.JournalMode) throws -> DatabaseQueue {
        var options = Database.Options()
        options.journalMode = journalMode
        let queue = try TestFixtures.makeQueue(dir.appendingPathComponent("app.db").path, key: key, options: options)
        try queue.write { db in try Self.fill(db, rows: Self.rows) }
        return queue
    }

    private static func fill(_ db: Database, rows: Int) throws {
        try db.execute("""
            CREATE TABLE item(id INTEGER PRIMARY KEY, n INTEGER, body TEXT);
            CREATE TABLE tally(total INTEGER);
            CREATE TABLE blob(b BLOB);
            CREATE INDEX item_n ON item(n);
            INSERT INTO tally VALUES (\(rows));
            WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i WHERE x < \(rows))
            INSERT INTO item(n, body) SELECT x, 'row ' || x || ' ' || hex(randomblob(60)) FROM i;
            PRAGMA user_version = 42;
            """)
    }

    /// Commits one row (and its tally) through `pool` on another thread;
    /// true when it completed within `waiting` seconds.
    private static func commitOnAnotherThread(_ pool: DatabasePool, waiting: Double) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let succeeded = Mutex(false)
        DispatchQueue.global().async {
            let ok = (try? pool.write { db in try db.execute("INSERT INTO item(n) VALUES (-1); UPDATE tally SET total = total + 1") }) != nil
            succeeded.withLock { $0 = ok }
            done.signal()
        }
        return done.wait(timeout: .now() + waiting) == .success && succeeded.withLock { $0 }
    }

    /// Opens the copy on its own, checks it whole, and that it holds one
    /// committed state: `rows` rows, the tally saying so, the user version.
    private func checkCopy(_ path: String, key: DatabaseKey?, options: Database.Options = Database.Options(), rows: Int,
                           file: StaticString = #filePath, line: UInt = #line) throws {
        var options = options
        options.readOnly = true
        let db = try Database(path: path, key: key, options: options)
        defer { db.close() }
        XCTAssertEqual(try db.integrityProblems(), [], file: file, line: line)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM item"), rows, file: file, line: line)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT total FROM tally"), rows, file: file, line: line)
        XCTAssertEqual(try db.fetchScalar(Int.self, "PRAGMA user_version"), 42, file: file, line: line)
    }

    private var noWaiting: Database.Options {
        var options = Database.Options()
        options.busyTimeout = .seconds(0)
        return options
    }

    private func filePermissions(_ path: String) throws -> Int {
        try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }
}
