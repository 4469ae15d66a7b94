import DBCrypt
import Foundation
import TestFixtures
import XCTest

/// The library's open of a database whose `-wal` still holds commits (a
/// process killed before any checkpoint): the log is checked before SQLite
/// may checkpoint, truncate or delete it, and a failed open changes no file.
final class WriteAheadLogOpeningTests: XCTestCase {
    private let secret = "wal-opening-secret"
    private var dir: URL!
    private var path: String!

    override func setUpWithError() throws {
        dir = try makeTemporaryDirectory(self)
        path = dir.appendingPathComponent("app.db").path
        try writeLoggedDatabase(path, key: TestKeys.text(named: secret))
    }

    /// Every file in the directory, by name.
    private func files() throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) {
            result[name] = try Data(contentsOf: dir.appendingPathComponent(name))
        }
        return result
    }

    private func rows(_ db: Database) throws -> [String] {
        try db.fetchAll(String.self, "SELECT a FROM t ORDER BY rowid")
    }

    func testAWrongKeyChangesNoFile() throws {
        let before = try files()
        XCTAssertThrowsError(try Database(path: path, key: .named("not the key"))) { error in
            XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: path))
        }
        XCTAssertEqual(try files(), before, "the database, its -wal and -shm")
        let db = try Database(path: path, key: .named(secret))
        XCTAssertEqual(try rows(db), ["zero", "one", "two", "three"])
    }

    func testADamagedLogIsATypedErrorUntilTheLossIsAccepted() throws {
        var log = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
        log[32 + 24 + 100] ^= 0x01   // frame 0's page: two commits follow it
        try log.write(to: URL(fileURLWithPath: path + "-wal"))
        let before = try files()
        XCTAssertThrowsError(try Database(path: path, key: .named(secret))) { error in
            XCTAssertEqual(error as? DatabaseError, .damagedWriteAheadLog(
                path: path, reason: "frame 0 is damaged (2 committed transactions from there on would be lost)"))
        }
        XCTAssertEqual(try files(), before)
        var options = Database.Options()
        options.acceptsDamagedWriteAheadLog = true
        let db = try Database(path: path, key: .named(secret), options: options)
        XCTAssertEqual(try rows(db), ["zero"])
    }

    func testALogOfAnotherDatabaseIsATypedErrorAndKept() throws {
        let other = dir.appendingPathComponent("other.db").path
        try writeLoggedDatabase(other, key: TestKeys.text(named: secret), rows: ["alien"])
        try FileManager.default.removeItem(atPath: path + "-wal")
        try FileManager.default.removeItem(atPath: path + "-shm")
        try FileManager.default.copyItem(atPath: other + "-wal", toPath: path + "-wal")
        let before = try files()
        XCTAssertThrowsError(try Database(path: path, key: .named(secret))) { error in
            XCTAssertEqual(error as? DatabaseError, .writeAheadLogDoesNotDecrypt(path: path))
        }
        XCTAssertThrowsError(try DatabaseEncryption.changeKey(path, from: .named(secret), to: .named("new")))
        XCTAssertEqual(try files(), before)
    }

    /// Page 1 of the file torn (a power loss mid-checkpoint) while the log
    /// holds a newer page 1: the file alone does not open with the key, but
    /// the log's frames authenticate with it, so it opens, with the log.
    func testATornFirstPageThatTheLogRepairsOpens() throws {
        let repaired = dir.appendingPathComponent("repaired.db").path
        try writeLoggedDatabase(repaired, key: TestKeys.text(named: secret), rows: ["one"], loggedFirst: "CREATE TABLE u(b);")
        var file = try Data(contentsOf: URL(fileURLWithPath: repaired))
        file[600] ^= 0x01   // inside page 1 (1024 bytes), past its salt
        try file.write(to: URL(fileURLWithPath: repaired))
        let db = try Database(path: repaired, key: .named(secret))
        XCTAssertEqual(try rows(db), ["zero", "one"])
        XCTAssertEqual(try db.fetchAll(String.self, "SELECT name FROM sqlite_master ORDER BY name"), ["t", "u"])
        XCTAssertThrowsError(try Database(path: repaired, key: .named("not the key"))) { error in
            XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: repaired))
        }
    }

    /// An export to another file reads the log's commits and leaves the
    /// source and its log as they were (SQLite rebuilds the -shm index).
    func testAnExportReadsTheLogAndLeavesIt() throws {
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        let log = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
        let plain = dir.appendingPathComponent("plain.db").path
        try DatabaseEncryption.decrypt(path, key: .named(secret), cipher: .sqlcipher3, to: plain)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), file)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path + "-wal")), log)
        XCTAssertEqual(try rows(try Database(path: plain)), ["zero", "one", "two", "three"])
    }

    func testClosingWithoutCheckpointKeepsTheLog() throws {
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        let log = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
        let db = try Database(path: path, key: .named(secret))
        XCTAssertEqual(try rows(db), ["zero", "one", "two", "three"])
        db.closeWithoutCheckpoint()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), file)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path + "-wal")), log)
        // An ordinary close folds it in.
        try Database(path: path, key: .named(secret)).close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"))
        XCTAssertEqual(try rows(try Database(path: path, key: .named(secret))), ["zero", "one", "two", "three"])
    }
}
