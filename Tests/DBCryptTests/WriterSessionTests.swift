import Foundation
import Synchronization
import TestFixtures
import XCTest
@testable import DBCrypt

/// The writer held by one task across suspension points (what SQLKit's
/// sessions and Fluent's transactions stand on), on a pool and on a queue.
final class WriterSessionTests: XCTestCase {
    var path: String!

    override func setUpWithError() throws {
        path = try makeTemporaryDirectory(self).appendingPathComponent("session.db").path
    }

    private func makePool() throws -> DatabasePool {
        try TestFixtures.makePool(path, schema: "CREATE TABLE IF NOT EXISTS note(id INTEGER PRIMARY KEY, title TEXT)")
    }

    /// While a session's transaction is open between two awaits, another
    /// task's write waits for the commit, and a read sees the last commit.
    func testAnotherTasksWriteWaitsAndAReadSeesTheLastCommit() async throws {
        let pool = try makePool()
        let otherWrote = Flag()
        let other = Mutex<Task<Void, Error>?>(nil)
        try await pool.withWriterSession { session in
            try await session.transaction {
                try await session.run { db in try db.execute("INSERT INTO note(title) VALUES ('inside')") }
                // Detached: a task made with Task {} inherits the session's task-local mark, and its write would be misuse.
                let task = Task.detached {
                    try await pool.write { db in try db.execute("INSERT INTO note(title) VALUES ('outside')") }
                    otherWrote.raise()
                }
                other.withLock { $0 = task }
                // The read runs on a reader while the transaction is open: it sees nothing yet.
                let seenByAReader = try await pool.read(noteCount)
                XCTAssertEqual(seenByAReader, 0)
                // The other write has been queued behind the session, and cannot have run.
                let seenInside = try await session.run(noteTitles)
                XCTAssertEqual(seenInside, ["inside"])
                XCTAssertFalse(otherWrote.isRaised)
            }
        }
        try await other.withLock { $0 }!.value
        let titles = try await pool.read(noteTitles)
        XCTAssertEqual(titles, ["inside", "outside"])
    }

    func testAThrowingOrCancelledTransactionRollsBack() async throws {
        struct Refused: Error {}
        let pool = try makePool()
        do {
            try await pool.withWriterSession { session in
                try await session.transaction {
                    try await session.run { db in try db.execute("INSERT INTO note(title) VALUES ('thrown away')") }
                    throw Refused()
                }
            }
            XCTFail("the transaction's error was not rethrown")
        } catch is Refused {}
        let count0 = try await pool.read(noteCount)
        XCTAssertEqual(count0, 0)

        let started = Flag()
        let task = Task {
            try await pool.withWriterSession { session in
                try await session.transaction {
                    try await session.run { db in try db.execute("INSERT INTO note(title) VALUES ('cancelled')") }
                    started.raise()
                    // No await checks for cancellation here: the commit must.
                    while !Task.isCancelled { await Task.yield() }
                }
            }
        }
        let didStart = await waitUntil { started.isRaised }
        XCTAssertTrue(didStart)
        task.cancel()
        do {
            try await task.value
            XCTFail("a cancelled transaction committed")
        } catch is CancellationError {}
        let afterCancel = try await pool.read(noteCount)
        XCTAssertEqual(afterCancel, 0)
        // The writer is free again.
        try await pool.write { db in try db.execute("INSERT INTO note(title) VALUES ('after')") }
        let count1 = try await pool.read(noteCount)
        XCTAssertEqual(count1, 1)
    }

    /// Writing through the pool or the queue itself from the task that holds
    /// the session would wait for the session forever: it is misuse.
    func testWritingThroughThePoolOrQueueFromInsideTheSessionIsMisuse() async throws {
        let pool = try makePool()
        let queue = try DatabaseQueue(path: path + "-queue.db", key: TestKeys.key)
        for writer in [pool as any DatabaseWriter, queue] {
            try await writer.withWriterSession { session in
                try await session.transaction {
                    do {
                        try await writer.write { db in try db.execute("CREATE TABLE never(x)") }
                        XCTFail("\(type(of: writer)): a write from inside its own session was accepted")
                    } catch let DatabaseError.misuse(reason) {
                        XCTAssertTrue(reason.contains("holds the database's writer"), reason)
                    }
                    do {
                        try blockingWrite(writer)
                        XCTFail("a blocking write from inside the session was accepted")
                    } catch DatabaseError.misuse {}
                    do {
                        try await writer.withWriterSession { _ in }
                        XCTFail("a second session from the task that holds one was accepted")
                    } catch DatabaseError.misuse {}
                }
            }
            // Once the session ended, the task writes again.
            try await writer.write { db in try db.execute("CREATE TABLE IF NOT EXISTS later(x)") }
        }
        // A pool's reads from inside the session go to its readers: no misuse, no wait.
        try await pool.withWriterSession { _ in
            let count = try await pool.read(noteCount)
            XCTAssertEqual(count, 0)
        }
        try queue.close()
    }

    /// A session on a closed pool fails at once; a session that ends with a
    /// transaction still open (a raw BEGIN) leaves the writer rolled back.
    func testAClosedWriterAndALeftOpenTransaction() async throws {
        let pool = try makePool()
        try await pool.withWriterSession { session in
            try await session.run { db in
                try db.execute("BEGIN IMMEDIATE")
                try db.execute("INSERT INTO note(title) VALUES ('left open')")
            }
        }
        let count0 = try await pool.write(noteCount)
        XCTAssertEqual(count0, 0)
        try pool.close()
        do {
            try await pool.withWriterSession { _ in XCTFail("a session began on a closed pool") }
            XCTFail("no error")
        } catch DatabaseError.connectionClosed {}
    }
}

/// The number of notes.
private func noteCount(_ db: Database) throws -> Int { try db.fetchScalar(Int.self, "SELECT count(*) FROM note") ?? -1 }

/// The notes' titles, in order.
private func noteTitles(_ db: Database) throws -> [String] { try db.fetchAll("SELECT title FROM note ORDER BY id").map { try $0["title"] as String } }

/// A write that blocks the calling thread (the overload an async context would not pick).
private func blockingWrite(_ writer: any DatabaseWriter) throws { try writer.writeWithoutTransaction { _ in } }
