import Foundation
import XCTest
@testable import DBCrypt

/// The in-place routines killed with SIGKILL in a child process: at random
/// moments, the instant the temporary file appears, just before the rename,
/// right after it and before the directory's sync that makes it durable (or,
/// for `Database.changeKey`, the instant its journal appears). After every
/// kill the path holds the complete original or the complete new database.
/// `make test` runs each point once or twice on 10,000 rows; `make
/// kill-tests` the full campaign on 100,000 (``KillCampaign``).
final class DatabaseEncryptionCrashTests: XCTestCase {
    static let rows = KillCampaign.size(quick: 10_000, full: 100_000)
    let oldKey = "crash test key"
    let newKey = "crash test new key"

    /// The plaintext fixture every test copies, built once per run.
    private static let plainTemplate = SharedFixture("crash-plain.db") { path in
        try EncryptionFixture.create(at: path, rows: rows)
    }
    /// The same, encrypted with the old key.
    private static let encryptedTemplate = SharedFixture("crash-encrypted.db") { path in
        try FileManager.default.copyItem(atPath: try plainTemplate.path(), toPath: path)
        try DatabaseEncryption.migrateInPlace(path, key: .named("crash test key"))
    }

    func testKilledMigrationLeavesTheOriginalOrTheEncryptedDatabase() throws {
        let dir = try makeTemporaryDirectory(self)
        try runKills(
            template: try Self.plainTemplate.path(), dir: dir, command: "migrate", keys: ["DBCRYPT_TEST_KEY": TestKeys.text(named: oldKey)],
            original: nil, replacement: .named(oldKey))
    }

    func testKilledKeyChangeLeavesTheOldOrTheNewKeyedDatabase() throws {
        let dir = try makeTemporaryDirectory(self)
        try runKills(
            template: try Self.encryptedTemplate.path(), dir: dir, command: "change-key",
            keys: ["DBCRYPT_TEST_KEY": TestKeys.text(named: oldKey), "DBCRYPT_TEST_NEW_KEY": TestKeys.text(named: newKey)],
            original: .named(oldKey), replacement: .named(newKey))
    }

    /// `Database.changeKey(to:)` rewrites every page in one transaction: a
    /// kill leaves a hot journal, which the next connection rolls back
    /// whichever key it was given, since the journal holds the pages as
    /// they were on disk.
    func testKilledConnectionRekeyLeavesTheOldOrTheNewKeyedDatabase() throws {
        let dir = try makeTemporaryDirectory(self)
        try runKills(
            template: try Self.encryptedTemplate.path(), dir: dir, command: "rekey-connection",
            keys: ["DBCRYPT_TEST_KEY": TestKeys.text(named: oldKey), "DBCRYPT_TEST_NEW_KEY": TestKeys.text(named: newKey)],
            original: .named(oldKey), replacement: .named(newKey),
            latePoints: [(.fileAppears(directory: dir.path, prefix: "app.db-journal"), .original),
                         (.fileModified(dir.appendingPathComponent("app.db").path), nil)])
    }

    /// Runs the routine on a copy of `template` once uninterrupted (timing
    /// it), then kills it at random moments and at `latePoints` (by default
    /// when its temporary file appears and right after the rename), checking
    /// the path after each kill.
    private func runKills(
        template: String, dir: URL, command: String, keys: [String: String],
        original: DatabaseKey?, replacement: DatabaseKey, latePoints: [(KillPoint, KillOutcome?)]? = nil
    ) throws {
        let path = dir.appendingPathComponent("app.db").path
        let temporary = ".app.db.dbcrypt-"
        let target = KillTarget.testHelper([command, path], keys: keys)
        func restoreOriginal() throws {
            try? FileManager.default.removeItem(atPath: path)
            try FileManager.default.copyItem(atPath: template, toPath: path)
        }
        try restoreOriginal()

        // One uninterrupted run tells how long the routine takes.
        let started = Date()
        let timing = try startTestHelper([command, path], keys: keys).finish()
        let duration = Date().timeIntervalSince(started)
        XCTAssertEqual(timing.status, 0, timing.stderr)
        try check(path, key: replacement)

        let late: [(KillPoint, KillOutcome?)]
        if let latePoints {
            late = latePoints
        } else {
            // A traced run finds the directory's sync after the rename.
            try restoreOriginal()
            let syncs = try target.fsyncsBeforeFirstRename()
            late = [(.fileAppears(directory: dir.path, prefix: temporary), .original), (.beforeRename, .original),
                          (.pathReplaced(path), .replaced), (.beforeSyscall("fsync", occurrence: syncs + 1), .replaced)]
        }
        let points: [(KillPoint, expected: KillOutcome?)] = Array(repeating: (.random, nil), count: KillCampaign.kills(quick: 2, full: 15))
            + late.flatMap { point in Array(repeating: (point.0, point.1), count: KillCampaign.kills(quick: 1, full: 4)) }
        try restoreOriginal()
        let tally = try killAtEach(points, typicalDuration: duration, target: target,
                                   state: {
            guard try holdsOriginal(path, originalKey: original) else {
                try check(path, key: replacement)
                return .replaced
            }
            try check(path, key: original)
            return .original
        }, restore: restoreOriginal)
        XCTAssertGreaterThan(tally[.original]!, 0, "no kill landed before the rename: the test proves little")
        print("\(command): \(points.count) kills within \(Int(duration * 1000)) ms runs: "
              + "\(tally[.original]!) left the original, \(tally[.replaced]!) the new database")

        // The path holds the original again: the next run cleans up whatever
        // the killed ones left behind.
        XCTAssertEqual(try startTestHelper([command, path], keys: keys).finish().status, 0)
        XCTAssertEqual(try EncryptionFixture.files(in: dir).filter { $0.hasPrefix(".app.db") || $0.hasPrefix("app.db-") }, [])
    }

    /// Whether the path still holds the original: plaintext for a migration,
    /// openable with the old key for a key change. The key change's connection
    /// opens read-write, as an app would: it rolls back a hot journal.
    private func holdsOriginal(_ path: String, originalKey: DatabaseKey?) throws -> Bool {
        guard let originalKey else { return try FileFormat.detect(at: path) != .notPlaintext }
        do {
            _ = try Database(path: path, key: originalKey)
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
