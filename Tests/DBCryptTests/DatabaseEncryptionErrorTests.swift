import Foundation
import XCTest
@testable import DBCrypt

/// Every refusal of the routines is its own error, and leaves every file as it was.
final class DatabaseEncryptionErrorTests: XCTestCase {
    let key = DatabaseKey.named("errors key")
    var dir: URL!
    var plain: String!
    var encrypted: String!

    override func setUpWithError() throws {
        dir = try makeTemporaryDirectory(self)
        plain = dir.appendingPathComponent("plain.db").path
        encrypted = dir.appendingPathComponent("encrypted.db").path
        try EncryptionFixture.create(at: plain, rows: 20)
        try EncryptionFixture.create(at: encrypted, key: key, rows: 20)
    }

    /// Runs `body`, expects `expected`, and checks no file in the directory changed.
    private func assertRefused(_ expected: DatabaseError, line: UInt = #line, _ body: () throws -> Void) throws {
        try assertRefusing(expected, line: line, body)
    }

    private func assertRefused(_ expected: CipherError, line: UInt = #line, _ body: () throws -> Void) throws {
        try assertRefusing(expected, line: line, body)
    }

    private func assertRefusing<E: Error & Equatable>(_ expected: E, line: UInt, _ body: () throws -> Void) throws {
        let before = try contents()
        XCTAssertThrowsError(try body(), line: line) { error in
            XCTAssertEqual(error as? E, expected, line: line)
        }
        XCTAssertEqual(try contents(), before, "a refused routine changed a file", line: line)
    }

    private func contents() throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try EncryptionFixture.files(in: dir) {
            let url = dir.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            XCTAssertTrue(FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory))
            result[name] = isDirectory.boolValue ? Data() : try Data(contentsOf: url)
        }
        return result
    }

    func testMissingSource() throws {
        let missing = dir.appendingPathComponent("missing.db").path
        try assertRefused(.fileNotFound(path: missing)) { try DatabaseEncryption.encrypt(missing, to: plain + ".x", key: key) }
        try assertRefused(.fileNotFound(path: missing)) { try DatabaseEncryption.migrateInPlace(missing, key: key) }
        try assertRefused(.fileNotFound(path: missing)) { try DatabaseEncryption.decrypt(missing, key: key, to: plain + ".x") }
        try assertRefused(.fileNotFound(path: missing)) { try DatabaseEncryption.changeKey(missing, from: key, to: key) }
    }

    func testSourceOfTheWrongKind() throws {
        try assertRefused(.sourceNotPlaintext(path: encrypted)) { try DatabaseEncryption.migrateInPlace(encrypted, key: key) }
        try assertRefused(.sourceNotPlaintext(path: encrypted)) {
            try DatabaseEncryption.encrypt(encrypted, to: plain + ".x", key: key)
        }
        try assertRefused(.notEncrypted(path: plain)) { try DatabaseEncryption.decrypt(plain, key: key, to: plain + ".x") }
        try assertRefused(.notEncrypted(path: plain)) { try DatabaseEncryption.changeKey(plain, from: key, to: key) }
    }

    func testWrongKey() throws {
        let wrong = DatabaseKey.named("wrong")
        try assertRefused(.wrongKeyOrNotADatabase(path: encrypted)) {
            try DatabaseEncryption.decrypt(encrypted, key: wrong, to: plain + ".x")
        }
        try assertRefused(.wrongKeyOrNotADatabase(path: encrypted)) {
            try DatabaseEncryption.changeKey(encrypted, from: wrong, to: key)
        }
    }

    func testDestinationExistsUnlessReplacing() throws {
        try assertRefused(.destinationExists(path: encrypted)) { try DatabaseEncryption.encrypt(plain, to: encrypted, key: key) }
        try assertRefused(.destinationExists(path: plain)) { try DatabaseEncryption.decrypt(encrypted, key: key, to: plain) }

        var options = ExportOptions()
        options.replaceExisting = true
        let other = DatabaseKey.named("other")
        try DatabaseEncryption.encrypt(plain, to: encrypted, key: other, options: options)
        XCTAssertEqual(try Database(path: encrypted, key: other).fetchScalar(Int.self, "SELECT count(*) FROM note"), 20)
    }

    func testDestinationIsADirectoryOrHasNoDirectory() throws {
        let folder = dir.appendingPathComponent("folder").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try assertRefused(.isDirectory(path: folder)) { try DatabaseEncryption.encrypt(plain, to: folder, key: key) }
        let nowhere = dir.appendingPathComponent("no/such/dir.db").path
        try assertRefused(.cannotOpen(path: nowhere, reason: "its directory does not exist")) {
            try DatabaseEncryption.encrypt(plain, to: nowhere, key: key)
        }
    }

    func testEmptyNewKeyIsRefused() throws {
        try assertRefused(CipherError.invalidKey(reason: "it is empty, which SQLCipher would take as no encryption at all")) {
            try DatabaseEncryption.migrateInPlace(plain, key: .passphrase(""))
        }
    }

    func testDatabaseInUseByAWriterIsRefused() throws {
        let writer = try Database(path: plain)
        try writer.execute("BEGIN IMMEDIATE; INSERT INTO audit VALUES (0, 'pending')")
        var options = ExportOptions()
        options.busyTimeout = .milliseconds(200)
        try assertRefused(.databaseInUse(path: plain)) { try DatabaseEncryption.migrateInPlace(plain, key: key, options: options) }
        try writer.execute("ROLLBACK")
    }

    func testDatabaseInUseByAWALReaderIsRefused() throws {
        let wal = dir.appendingPathComponent("wal.db").path
        try EncryptionFixture.create(at: wal, rows: 5, walFrames: true)
        let reader = try Database(path: wal)
        let cursor = try reader.query("SELECT * FROM note")
        _ = try cursor.next()
        var options = ExportOptions()
        options.busyTimeout = .milliseconds(200)
        try assertRefused(.databaseInUse(path: wal)) { try DatabaseEncryption.migrateInPlace(wal, key: key, options: options) }
        _ = cursor
    }

    func testAbandonedTemporariesAreRemovedAndOthersKept() throws {
        // A temporary whose writer is dead, one whose writer is alive, and files that are not ours.
        let deadPID: Int32 = 999_999
        let abandoned = ".plain.db.dbcrypt-\(deadPID)-12345"
        let live = ".plain.db.dbcrypt-\(getppid())-777"
        let foreign = ["plain.db.dbcrypt-1-1", ".plain.db.backup", ".other.db.dbcrypt-\(deadPID)-1"]
        for name in [abandoned, abandoned + "-journal", live] + foreign {
            XCTAssertTrue(FileManager.default.createFile(atPath: dir.appendingPathComponent(name).path, contents: Data("x".utf8)))
        }
        try DatabaseEncryption.migrateInPlace(plain, key: key)
        let left = try EncryptionFixture.files(in: dir)
        XCTAssertFalse(left.contains(abandoned))
        XCTAssertFalse(left.contains(abandoned + "-journal"))
        XCTAssertTrue(left.contains(live))
        for name in foreign { XCTAssertTrue(left.contains(name), name) }
    }

    func testCancellationLeavesTheSourceAndNoTemporary() throws {
        let big = dir.appendingPathComponent("big.db").path
        try EncryptionFixture.create(at: big, rows: 20_000)
        let before = try contents()
        let cancellation = JobCancellation()
        var options = ExportOptions()
        options.cancellation = cancellation
        let log = ProgressLog()
        options.progress = { report in
            log.append(report)
            cancellation.cancel()
        }
        XCTAssertThrowsError(try DatabaseEncryption.migrateInPlace(big, key: key, options: options)) { error in
            XCTAssertEqual(error as? DatabaseError, .cancelled)
        }
        XCTAssertFalse(log.all.isEmpty)
        XCTAssertEqual(try contents(), before)

        // Cancelled before it starts: nothing happens either.
        XCTAssertThrowsError(try DatabaseEncryption.encrypt(big, to: big + ".enc", key: key, options: options)) { error in
            XCTAssertEqual(error as? DatabaseError, .cancelled)
        }
        XCTAssertEqual(try contents(), before)
    }
}
