import Foundation
import Synchronization
import TestFixtures
import XCTest
@testable import DBCrypt

/// A destination holds one backup: one writer at a time, records never
/// replaced, and another backup's records, copied in, never taken for its
/// own, whatever key the two share. A database replaced under its backup
/// stops it.
final class BackupDestinationTests: XCTestCase {
    private let schema = "CREATE TABLE IF NOT EXISTS t(n INTEGER PRIMARY KEY, v TEXT)"

    /// Two databases under one key (a raw key: their records authenticate
    /// under the same key; a passphrase: each file its own salt), each with
    /// its own backup. B's records numbered past A's last, copied into A's
    /// destination under their own names, are skipped and named: restore
    /// gives A's last commit, and A's backup refuses to continue there.
    func testAnotherDatabasesRecordsCopiedInAreNeverRestored() throws {
        for key in [DatabaseKey.named("one key for two databases"), .passphrase("one passphrase for two databases")] {
            let dir = try makeTemporaryDirectory(self)
            let (a, aRecords, _) = try backedUp(dir, "a", key: key, rounds: 2)
            let (b, bRecords, _) = try backedUp(dir, "b", key: key, rounds: 6)
            XCTAssertGreaterThan(bRecords.count, aRecords.count)
            let aLast = try XCTUnwrap(aRecords.last.flatMap { BackupRecord.parse(name: $0)?.number })
            var copied = 0
            for name in bRecords where BackupRecord.parse(name: name)!.number > aLast {
                try FileManager.default.copyItem(atPath: b.path + "/" + name, toPath: a.path + "/" + name)
                copied += 1
            }
            XCTAssertGreaterThan(copied, 2)

            let restored = dir.appendingPathComponent("restored.db").path
            let result = try ContinuousBackup.restore(from: a, key: key, to: restored)
            XCTAssertNotNil(result.skipped ?? result.problem, "B's records were taken in silently")
            if key.kind == .raw {
                XCTAssertEqual(result.skipped, "records \(aLast + 1) to \(aLast + UInt64(copied)) belong to another backup (copied in) and were skipped")
            }
            let db = try Database(path: restored, key: key)
            XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM t WHERE v NOT LIKE 'A%'"), 0)
            XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM t"), 2)
            db.close()

            // A's backup does not continue a destination whose newest records are another backup's;
            // under a passphrase they are another salt's, which do not authenticate: it goes on past them.
            if key.kind == .raw {
                XCTAssertThrowsError(try ContinuousBackup(path: dir.appendingPathComponent("a.db").path, key: key, storage: a)) { error in
                    guard case .damaged(_, let reason)? = error as? BackupError else { return XCTFail("\(error)") }
                    XCTAssertTrue(reason.contains("belong to another backup"), reason)
                }
            } else {
                try ContinuousBackup(path: dir.appendingPathComponent("a.db").path, key: key, storage: a).stop()
            }
        }
    }

    /// A second backup of the same database started while one runs is
    /// refused; once the first stops, the second continues the same backup.
    func testADestinationHasOneWriterAtATime() throws {
        let dir = try makeTemporaryDirectory(self)
        let key = DatabaseKey.named("one writer")
        let path = dir.appendingPathComponent("app.db").path
        try TestFixtures.makePool(path, key: key, schema: schema).close()
        let storage = try DirectoryBackupStorage(path: dir.appendingPathComponent("backup").path)
        var options = ContinuousBackup.Options()
        options.interval = .seconds(3600)
        let first = try ContinuousBackup(path: path, key: key, storage: storage, options: options)
        XCTAssertThrowsError(try ContinuousBackup(path: path, key: key, storage: try DirectoryBackupStorage(path: storage.path), options: options)) { error in
            XCTAssertEqual(error as? BackupError, .destinationInUse(location: storage.path))
            XCTAssertEqual((error as? BackupError)?.endsContinuousBackup, true)
        }
        try first.stop()
        let shipped = try XCTUnwrap(first.lastShipped)
        let second = try ContinuousBackup(path: path, key: key, storage: storage, options: options)
        let continued = try XCTUnwrap(second.lastShipped)
        XCTAssertEqual(continued.receipt.backup, shipped.receipt.backup, "the second did not continue the first")
        XCTAssertGreaterThanOrEqual(continued.commit, shipped.commit)
        try second.stop()
    }

    /// An object is never replaced: a put under an existing name fails and
    /// leaves the object as it was.
    func testAPutNeverReplacesAnObject() throws {
        let dir = try makeTemporaryDirectory(self)
        let storage = try DirectoryBackupStorage(path: dir.path)
        try storage.put("0000000000000001-frames-5", Data("first".utf8))
        XCTAssertThrowsError(try storage.put("0000000000000001-frames-5", Data("second".utf8))) { error in
            XCTAssertEqual(error as? BackupError, .objectExists(location: dir.path + "/0000000000000001-frames-5"))
        }
        XCTAssertEqual(try storage.get("0000000000000001-frames-5"), Data("first".utf8))
        XCTAssertEqual(try storage.list(), ["0000000000000001-frames-5"], "a temporary was left")
    }

    /// The database renamed over while its backup runs: the backup's next
    /// round stops it with its own error (by the timer, and by hand), and
    /// the destination holds the old file's commits only.
    func testADatabaseReplacedWhileItsBackupRunsStopsIt() throws {
        let dir = try makeTemporaryDirectory(self)
        let key = DatabaseKey.named("replaced")
        let path = dir.appendingPathComponent("app.db").path
        let pool = try TestFixtures.makePool(path, key: key, schema: schema)
        try pool.write { db in try db.execute("INSERT INTO t(v) VALUES ('old')") }
        try pool.close()
        let storage = try DirectoryBackupStorage(path: dir.appendingPathComponent("backup").path)
        // One lock for both facts, so the wait below sees an error with its verdict.
        let failures = Mutex<[(description: String, ends: Bool)]>([])
        var options = ContinuousBackup.Options()
        options.interval = .milliseconds(5)
        options.failed = { error in
            failures.withLock { $0.append(("\(error)", (error as? BackupError)?.endsContinuousBackup == true)) }
        }
        let backup = try ContinuousBackup(path: path, key: key, storage: storage, options: options)

        let other = dir.appendingPathComponent("other.db").path
        let replacement = try TestFixtures.makePool(other, key: key, schema: schema)
        try replacement.write { db in try db.execute("INSERT INTO t(v) VALUES ('new'), ('new')") }
        try replacement.close()
        XCTAssertEqual(rename(other, path), 0)

        XCTAssertTrue(waitUntil(timeout: 10) { !failures.withLock { $0 }.isEmpty }, "the backup did not notice")
        XCTAssertEqual(failures.withLock { $0.map(\.description) }, [BackupError.databaseReplaced(path: path).description])
        XCTAssertEqual(failures.withLock { $0.map(\.ends) }, [true], "the error says that the backup ended")
        XCTAssertThrowsError(try backup.shipNow()) { error in
            XCTAssertEqual(error as? BackupError, .databaseReplaced(path: path))
        }
        XCTAssertThrowsError(try backup.stop()) { error in
            XCTAssertEqual(error as? BackupError, .databaseReplaced(path: path))
        }
        // Its destination is free again: the new file can be backed up (elsewhere, as the message says).
        let restored = dir.appendingPathComponent("restored.db").path
        try ContinuousBackup.restore(from: storage, key: key, to: restored)
        let db = try Database(path: restored, key: key)
        XCTAssertEqual(try db.fetchScalar(String.self, "SELECT group_concat(v) FROM t"), "old")
        db.close()
        try ContinuousBackup(path: path, key: key, storage: try DirectoryBackupStorage(path: dir.appendingPathComponent("new").path)).stop()
    }

    /// A receipt kept apart from the destination detects what nothing there
    /// can show: the destination rolled back (its newest records removed),
    /// or replaced whole by another backup under the same key.
    func testAReceiptDetectsARollbackAndAReplacedDestination() throws {
        let dir = try makeTemporaryDirectory(self)
        let key = DatabaseKey.named("receipts")
        let (storage, records, receipt) = try backedUpWithReceipt(dir, "a", key: key, rounds: 3)
        XCTAssertEqual(BackupReceipt(receipt.description), receipt)
        XCTAssertNil(BackupReceipt(receipt.description + "0"))
        XCTAssertNil(BackupReceipt("dbcrypt-backup-receipt 1"))

        let restored = dir.appendingPathComponent("restored.db").path
        XCTAssertEqual(try ContinuousBackup.restore(from: storage, key: key, to: restored, expecting: receipt).commit, receipt.commit)

        // Rolled back: the last round's record removed. Without the receipt it looks like a backup stopped a round earlier.
        try FileManager.default.removeItem(atPath: storage.path + "/" + records.last!)
        let earlier = dir.appendingPathComponent("earlier.db").path
        XCTAssertEqual(try ContinuousBackup.restore(from: storage, key: key, to: earlier).commit, receipt.commit - 1)
        let refused = dir.appendingPathComponent("refused.db").path
        XCTAssertThrowsError(try ContinuousBackup.restore(from: storage, key: key, to: refused, expecting: receipt)) { error in
            guard case .notAsExpected(_, let reason)? = error as? BackupError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("rolled back"), reason)
        }
        // Replaced whole by another database's backup under the same key.
        let (other, _, _) = try backedUpWithReceipt(dir, "b", key: key, rounds: 5)
        XCTAssertThrowsError(try ContinuousBackup.restore(from: other, key: key, to: refused, expecting: receipt)) { error in
            guard case .notAsExpected(_, let reason)? = error as? BackupError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("another backup"), reason)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: refused))
    }

    // MARK: - Helpers

    private func backedUpWithReceipt(_ dir: URL, _ name: String, key: DatabaseKey, rounds: Int) throws -> (DirectoryBackupStorage, [String], BackupReceipt) {
        let (storage, records, last) = try backedUp(dir, name, key: key, rounds: rounds)
        return (storage, records, last.receipt)
    }

    /// A database `name`.db in `dir` whose continuous backup shipped
    /// `rounds` commits of one row each, its values starting with the name
    /// in capitals: the destination and its records' names, in order.
    private func backedUp(_ dir: URL, _ name: String, key: DatabaseKey, rounds: Int) throws -> (DirectoryBackupStorage, [String], ContinuousBackup.ShippedCommit) {
        let storage = try DirectoryBackupStorage(path: dir.appendingPathComponent("backup-\(name)").path)
        var backupOptions = ContinuousBackup.Options()
        backupOptions.interval = .seconds(3600)
        var options = Database.Options()
        options.continuousBackup = .init(storage: storage, options: backupOptions)
        let pool = try TestFixtures.makePool(dir.appendingPathComponent("\(name).db").path, key: key, options: options, schema: schema)
        var last = try XCTUnwrap(try pool.continuousBackup?.shipNow())
        for round in 0..<rounds {
            try pool.write { db in try db.execute("INSERT INTO t(v) VALUES (?)", [name.uppercased() + "\(round)"]) }
            last = try XCTUnwrap(try pool.continuousBackup?.shipNow())
        }
        try pool.close()
        return (storage, try storage.list().sorted(), last)
    }
}
