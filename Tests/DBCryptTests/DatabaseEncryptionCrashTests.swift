import Foundation
import XCTest
@testable import DBCrypt

/// The in-place routines killed with SIGKILL at random moments, in a child
/// process, on a 100k-row database: after every kill the path holds the
/// complete original or the complete new database.
final class DatabaseEncryptionCrashTests: XCTestCase {
    static let rows = 100_000
    let oldKey = "crash test key"
    let newKey = "crash test new key"

    func testKilledMigrationLeavesTheOriginalOrTheEncryptedDatabase() throws {
        let dir = try makeTemporaryDirectory(self)
        let template = dir.appendingPathComponent("template.db").path
        try EncryptionFixture.create(at: template, rows: Self.rows)
        try runKills(
            count: 30, template: template, dir: dir, command: "migrate", keys: ["DBCRYPT_TEST_KEY": oldKey],
            original: nil, replacement: .passphrase(oldKey))
    }

    func testKilledKeyChangeLeavesTheOldOrTheNewKeyedDatabase() throws {
        let dir = try makeTemporaryDirectory(self)
        let template = dir.appendingPathComponent("template.db").path
        try EncryptionFixture.create(at: template, rows: Self.rows)
        try DatabaseEncryption.migrateInPlace(template, key: .passphrase(oldKey))
        try runKills(
            count: 25, template: template, dir: dir, command: "change-key",
            keys: ["DBCRYPT_TEST_KEY": oldKey, "DBCRYPT_TEST_NEW_KEY": newKey],
            original: .passphrase(oldKey), replacement: .passphrase(newKey))
    }

    /// Runs the routine on a copy of `template` `count` times, killing it at a
    /// random moment within its usual duration, and checks the path after each kill.
    private func runKills(
        count: Int, template: String, dir: URL, command: String, keys: [String: String],
        original: DatabaseKey?, replacement: DatabaseKey
    ) throws {
        let path = dir.appendingPathComponent("app.db").path
        try FileManager.default.copyItem(atPath: template, toPath: path)

        // One uninterrupted run tells how long the routine takes.
        let started = Date()
        let (timing, timingErrors) = try startTestHelper([command, path], keys: keys)
        timing.waitUntilExit()
        let duration = Date().timeIntervalSince(started)
        XCTAssertEqual(timing.terminationStatus, 0, String(decoding: timingErrors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
        try check(path, key: replacement)

        var outcomes = (original: 0, replaced: 0)
        var needsOriginal = true
        for _ in 0..<count {
            if needsOriginal {
                try? FileManager.default.removeItem(atPath: path)
                try FileManager.default.copyItem(atPath: template, toPath: path)
            }
            let (child, _) = try startTestHelper([command, path], keys: keys)
            usleep(useconds_t(Double.random(in: 0...(duration * 1.1)) * 1_000_000))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()

            if try holdsOriginal(path, originalKey: original) {
                try check(path, key: original)
                outcomes.original += 1
                needsOriginal = false
            } else {
                try check(path, key: replacement)
                outcomes.replaced += 1
                needsOriginal = true
            }
        }
        XCTAssertGreaterThan(outcomes.original, 0, "no kill landed before the rename: the test proves little")
        print("\(command): \(count) kills within \(Int(duration * 1000)) ms runs: \(outcomes.original) left the original, \(outcomes.replaced) the new database")

        // The next run cleans up whatever the killed ones left behind.
        if !needsOriginal {
            let (final, _) = try startTestHelper([command, path], keys: keys)
            final.waitUntilExit()
            XCTAssertEqual(final.terminationStatus, 0)
        } else {
            SiblingFile.removeAbandoned(beside: path)
        }
        XCTAssertEqual(try EncryptionFixture.files(in: dir).filter { $0.hasPrefix(".app.db") }, [])
    }

    /// Whether the path still holds the original: plaintext for a migration,
    /// openable with the old key for a key change.
    private func holdsOriginal(_ path: String, originalKey: DatabaseKey?) throws -> Bool {
        guard let originalKey else { return try FileFormat.detect(at: path) != .notPlaintext }
        do {
            _ = try Database(path: path, key: originalKey, options: readOnly)
            return true
        } catch DatabaseError.wrongKeyOrNotADatabase {
            return false
        }
    }

    /// Opens with `key`, checks integrity and that every row is there.
    private func check(_ path: String, key: DatabaseKey?, file: StaticString = #filePath, line: UInt = #line) throws {
        let db = try Database(path: path, key: key, options: readOnly)
        defer { db.close() }
        XCTAssertEqual(try db.fetchScalar(String.self, "PRAGMA quick_check"), "ok", file: file, line: line)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM note"), Self.rows, file: file, line: line)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM audit"), Self.rows, file: file, line: line)
        XCTAssertEqual(try db.fetchScalar(Int.self, "PRAGMA user_version"), 7, file: file, line: line)
    }

    private var readOnly: Database.Options {
        var options = Database.Options()
        options.readOnly = true
        return options
    }
}
