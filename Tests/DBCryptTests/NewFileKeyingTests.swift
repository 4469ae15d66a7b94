import Dispatch
import Foundation
import XCTest
@testable import DBCrypt

/// A keyed connection leaves open only once a new file has its header and
/// salt, so every later connection derives its key from that same salt.
final class NewFileKeyingTests: XCTestCase {
    let key = DatabaseKey.passphrase("new file")

    private func newPath() throws -> String {
        try makeTemporaryDirectory(self).appendingPathComponent("new.db").path
    }

    func testOpeningANewFileWritesItsHeaderAndSaltBeforeReturning() throws {
        let path = try newPath()
        let db = try Database(path: path, key: key)
        let header = try fileHeader(path)
        XCTAssertEqual(header.count, 16, "the salt is on disk before the first write")
        XCTAssertNotEqual(header, SQLiteHeader.magic)
        db.close()
        XCTAssertThrowsError(try Database(path: path, key: .passphrase("another key"))) { error in
            XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: path))
        }
    }

    func testTwoQueuesOpenedOnOneNewFileSeeEachOthersWrites() throws {
        for mode in [Database.JournalMode.default, .wal] {
            let path = try newPath()
            var options = Database.Options()
            options.journalMode = mode
            let first = try DatabaseQueue(path: path, key: key, options: options)
            let second = try DatabaseQueue(path: path, key: key, options: options)
            try first.write { db in
                try db.execute("CREATE TABLE note(title TEXT)")
                try db.execute("INSERT INTO note VALUES ('from the first')")
            }
            XCTAssertEqual(try second.read { db in try db.fetchAll(String.self, "SELECT title FROM note") },
                           ["from the first"], "journal mode \(mode)")
            try second.write { db in try db.execute("INSERT INTO note VALUES ('from the second')") }
            XCTAssertEqual(try first.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM note") }, 2)
        }
    }

    func testAWrongKeyOnAFileAnotherConnectionJustCreatedIsRefused() throws {
        let path = try newPath()
        let creator = try DatabaseQueue(path: path, key: key)
        XCTAssertThrowsError(try DatabaseQueue(path: path, key: .passphrase("not the key"))) { error in
            XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: path))
        }
        try creator.write { db in try db.execute("CREATE TABLE t(x)") }
    }

    func testConnectionsOpeningOneNewFileAtTheSameMomentAgree() throws {
        // Raw keys skip PBKDF2, so the openers really race each other.
        let raw = try DatabaseKey(rawKey: [UInt8](repeating: 7, count: 32))
        for round in 0..<20 {
            let path = try makeTemporaryDirectory(self).appendingPathComponent("race-\(round).db").path
            let opened = Opened()
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                do { opened.add(try DatabaseQueue(path: path, key: raw)) } catch { opened.fail(error) }
            }
            XCTAssertEqual(opened.errors, [], "round \(round)")
            let queues = opened.queues
            try queues[0].write { db in try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
            for queue in queues {
                XCTAssertEqual(try queue.read { db in try db.fetchScalar(Int.self, "SELECT x FROM t") }, 1, "round \(round)")
            }
        }
    }
}

/// Queues opened and errors met by several threads.
private final class Opened: @unchecked Sendable {
    private let lock = NSLock()
    private var opened: [DatabaseQueue] = []
    private var failures: [String] = []
    func add(_ queue: DatabaseQueue) { lock.lock(); opened.append(queue); lock.unlock() }
    func fail(_ error: Error) { lock.lock(); failures.append("\(error)"); lock.unlock() }
    var queues: [DatabaseQueue] { lock.lock(); defer { lock.unlock() }; return opened }
    var errors: [String] { lock.lock(); defer { lock.unlock() }; return failures }
}
