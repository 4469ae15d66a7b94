import Foundation
import Synchronization
import TestFixtures
import XCTest
@testable import DBCrypt

/// A continuous backup's receipt file (`Options.receiptPath`) and
/// `BackupReceipt(contentsOf:)`, on real files.
final class ContinuousBackupReceiptTests: XCTestCase {
    /// What `failed` was called with.
    final class Failures: Sendable {
        let errors = Mutex<[Error]>([])
    }

    let key = DatabaseKey.named("receipt test key")
    var dir: URL!

    override func setUpWithError() throws {
        dir = try makeTemporaryDirectory(self)
    }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// A pool in WAL mode with a table, and a backup of it by hand (no timer rounds).
    private func backup(receiptPath: String?, failures: Failures? = nil) throws -> (DatabasePool, ContinuousBackup) {
        let pool = try TestFixtures.makePool(path("app.db"), key: key, options: Database.Options(),
                                             schema: "CREATE TABLE IF NOT EXISTS item(id INTEGER PRIMARY KEY, body TEXT)")
        var options = ContinuousBackup.Options()
        options.interval = .seconds(3600)
        options.receiptPath = receiptPath
        if let failures { options.failed = { error in failures.errors.withLock { $0.append(error) } } }
        let backup = try ContinuousBackup(path: pool.path, key: key, storage: try DirectoryBackupStorage(path: path("destination")),
                                          options: options)
        return (pool, backup)
    }

    func testEachCommitShippedLeavesItsReceiptInTheFile() throws {
        let receiptPath = path("app.db-receipt")
        let (pool, backup) = try backup(receiptPath: receiptPath)
        for body in ["one", "two"] {
            try pool.write { db in try db.execute("INSERT INTO item(body) VALUES (?)", [body]) }
            let shipped = try XCTUnwrap(try backup.shipNow())
            // Written on the backup's callbacks' queue, after the round.
            XCTAssertTrue(waitUntil(timeout: 10) { (try? BackupReceipt(contentsOf: receiptPath)) == shipped.receipt })
            XCTAssertEqual(try BackupReceipt(contentsOf: receiptPath), shipped.receipt)
            XCTAssertEqual(try String(contentsOfFile: receiptPath, encoding: .utf8), shipped.receipt.description + "\n")
        }
        try backup.stop()
        XCTAssertEqual(try BackupReceipt(contentsOf: receiptPath), backup.lastShipped?.receipt)
        // What the file holds is what a restore checks the backup against.
        let storage = try DirectoryBackupStorage(path: path("destination"))
        let restored = try ContinuousBackup.restore(from: storage, key: key, to: path("restored.db"),
                                                    expecting: try BackupReceipt(contentsOf: receiptPath))
        XCTAssertEqual(restored.commit, backup.lastShipped?.commit)
        try pool.close()
    }

    func testAReceiptNotWrittenIsReportedAndTheBackupGoesOn() throws {
        let receiptPath = path("missing/app.db-receipt")
        let failures = Failures()
        let (pool, backup) = try backup(receiptPath: receiptPath, failures: failures)
        try pool.write { db in try db.execute("INSERT INTO item(body) VALUES ('one')") }
        try backup.stop()
        let last = try XCTUnwrap(backup.lastShipped)
        let errors = failures.errors.withLock { $0 }
        XCTAssertFalse(errors.isEmpty)
        for error in errors {
            guard case let .receiptNotWritten(commit, path, reason)? = error as? BackupError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, receiptPath)
            XCTAssertFalse(reason.isEmpty)
            XCTAssertEqual((error as! BackupError).description, "The receipt of commit \(commit) could not be written to \(receiptPath): \(reason).")
            XCTAssertEqual((error as! BackupError).category, .storage)
        }
        guard case let .receiptNotWritten(lastCommit, _, _)? = errors.last as? BackupError else { return XCTFail("\(errors)") }
        XCTAssertEqual(lastCommit, last.commit)
        XCTAssertFalse(FileManager.default.fileExists(atPath: receiptPath))
        try pool.close()
    }

    func testAFileThatIsNoReceiptIsNamed() throws {
        let junk = path("junk")
        FileManager.default.createFile(atPath: junk, contents: Data("not a receipt\n".utf8))
        XCTAssertThrowsError(try BackupReceipt(contentsOf: junk)) { error in
            XCTAssertEqual(error as? BackupError, .notAReceipt(path: junk))
        }
        let missing = path("missing")
        XCTAssertThrowsError(try BackupReceipt(contentsOf: missing)) { error in
            XCTAssertEqual(error as? BackupError, .receiptUnreadable(path: missing, reason: "it does not exist"))
            XCTAssertEqual("\(error)", "The receipt \(missing) cannot be read: it does not exist.")
        }
        XCTAssertThrowsError(try BackupReceipt(contentsOf: dir.path)) { error in
            XCTAssertEqual(error as? BackupError, .receiptUnreadable(path: dir.path, reason: "it is a directory"))
        }
    }
}
