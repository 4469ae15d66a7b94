import Foundation
import XCTest
@testable import DBCrypt

/// Observation on real encrypted files, through a pool and a queue: a value
/// at once, one after each commit that touches what the query read, none
/// for other tables, and the end of it all when the task is cancelled.
final class ObservationTests: XCTestCase {
    var key: DatabaseKey { .named(passphrase) }

    let passphrase = "observation tests passphrase"

    private func makeWriters() throws -> [any ObservedWriter] {
        let dir = try makeTemporaryDirectory(self)
        let pool = try DatabasePool(path: dir.appendingPathComponent("pool.db").path, key: key)
        let queue = try DatabaseQueue(path: dir.appendingPathComponent("queue.db").path, key: key)
        for writer in [pool, queue] as [any ObservedWriter] {
            try writer.write { db in
                try db.execute("""
                    CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT);
                    CREATE TABLE other(id INTEGER PRIMARY KEY, value TEXT);
                    CREATE VIEW titled AS SELECT title FROM note WHERE title IS NOT NULL;
                    CREATE TABLE keyed(k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID;
                    """)
            }
        }
        return [pool, queue]
    }

    func testEachCommitToTheObservedTableGivesOneValueAndOtherTablesNone() async throws {
        for writer in try makeWriters() {
            let fetches = Counter()
            let stream = writer.observeValues { db -> Int in
                fetches.increment()
                return try db.fetchScalar(Int.self, "SELECT count(*) FROM note") ?? -1
            }
            let values = Values(stream)
            let first = try await values.next()
            XCTAssertEqual(first, 0, "\(writer)")
            try await writer.write { db in try db.execute("INSERT INTO note(title) VALUES ('one')") }
            let second = try await values.next()
            XCTAssertEqual(second, 1, "\(writer)")

            // Commits to another table, then one to the observed table:
            // observations run in commit order, so once its value arrives,
            // a fetch for any of the others would have run before it.
            let before = fetches.value
            for i in 0..<5 { try await writer.write { db in try db.execute("INSERT INTO other(value) VALUES (?)", ["\(i)"]) } }
            try await writer.write { db in try db.execute("INSERT INTO note(title) VALUES ('two')") }
            let third = try await values.next()
            XCTAssertEqual(third, 2, "\(writer)")
            XCTAssertEqual(fetches.value, before + 1, "\(writer): commits to another table fetched again")
        }
    }

    /// A `DELETE` with no `WHERE` (which SQLite would run without telling the
    /// update hook), an UPDATE, a rolled-back write, and a view over the table.
    func testDeletesUpdatesRollbacksAndViews() async throws {
        for writer in try makeWriters() {
            let titles = Values(writer.observeValues { db in try db.fetchAll(String.self, "SELECT title FROM titled ORDER BY title") })
            let first = try await titles.next()
            XCTAssertEqual(first, [])
            try await writer.write { db in try db.execute("INSERT INTO note(title) VALUES ('a'), ('b')") }
            let second = try await titles.next()
            XCTAssertEqual(second, ["a", "b"])
            do {
                try await writer.write { db in
                    try db.execute("INSERT INTO note(title) VALUES ('never')")
                    throw DatabaseError.cancelled
                }
            } catch DatabaseError.cancelled {}
            try await writer.write { db in try db.execute("UPDATE note SET title = 'c' WHERE title = 'a'") }
            let third = try await titles.next()
            XCTAssertEqual(third, ["b", "c"], "\(writer): the rolled-back insert is not seen, the update is")
            try await writer.write { db in try db.execute("DELETE FROM note") }
            let fourth = try await titles.next()
            XCTAssertEqual(fourth, [], "\(writer)")
        }
    }

    /// The hooks must not change what SQL does: a DROP TABLE drops (SQLite
    /// skips it silently when the authorizer ignores its DELETE check), and
    /// an observation of the dropped table hears of it.
    func testDropTableDropsAndIsObserved() async throws {
        for writer in try makeWriters() {
            let values = Values(writer.observeValues { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM other") ?? -1 })
            let first = try await values.next()
            XCTAssertEqual(first, 0)
            try await writer.write { db in try db.execute("DROP TABLE other") }
            do {
                _ = try await values.next()
                XCTFail("\(writer): the observation did not hear of the drop")
            } catch let error as DatabaseError {
                XCTAssertTrue("\(error)".contains("no such table: other"), "\(error)")
            }
            let tables = try await writer.read { db in try db.fetchAll(String.self, "SELECT name FROM sqlite_master WHERE type = 'table'") }
            XCTAssertEqual(tables.sorted(), ["keyed", "note"], "\(writer)")
        }
    }

    /// SQLite's update hook never reports a `WITHOUT ROWID` table: inserts,
    /// updates and deletes there are seen all the same.
    func testWithoutRowidTablesAreObserved() async throws {
        for writer in try makeWriters() {
            let values = Values(writer.observeValues { db in try db.fetchAll(String.self, "SELECT v FROM keyed ORDER BY k") })
            let first = try await values.next()
            XCTAssertEqual(first, [], "\(writer)")
            try await writer.write { db in try db.execute("INSERT INTO keyed(k, v) VALUES ('a', 'one'), ('b', 'two')") }
            let second = try await values.next()
            XCTAssertEqual(second, ["one", "two"], "\(writer)")
            try await writer.write { db in try db.execute("UPDATE keyed SET v = 'uno' WHERE k = 'a'") }
            let third = try await values.next()
            XCTAssertEqual(third, ["uno", "two"], "\(writer)")
            try await writer.write { db in try db.execute("DELETE FROM keyed") }
            let fourth = try await values.next()
            XCTAssertEqual(fourth, [], "\(writer)")
        }
    }

    func testDuplicatesAreDroppedWhenAsked() async throws {
        for writer in try makeWriters() {
            let stream = writer.observeDistinctValues { db in
                try db.fetchScalar(Int.self, "SELECT count(*) FROM note WHERE title = 'x'") ?? -1
            }
            let values = Values(stream)
            let first = try await values.next()
            XCTAssertEqual(first, 0)
            try await writer.write { db in try db.execute("INSERT INTO note(title) VALUES ('not x')") }
            try await writer.write { db in try db.execute("INSERT INTO note(title) VALUES ('x')") }
            let second = try await values.next()
            XCTAssertEqual(second, 1, "\(writer): the unchanged count after the first insert is not delivered")
        }
    }

    func testCancellingTheTaskEndsTheObservation() async throws {
        for writer in try makeWriters() {
            let stream = writer.observeValues { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM note") ?? -1 }
            let started = Counter()
            let task = Task {
                var seen = 0
                for try await _ in stream {
                    seen += 1
                    started.increment()
                }
                return seen
            }
            let begun = await waitUntil { started.value > 0 }
            XCTAssertTrue(begun, "\(writer): the observation gave no value")
            XCTAssertEqual(writer.observationCount, 1)
            task.cancel()
            _ = try? await task.value
            XCTAssertEqual(writer.observationCount, 0, "\(writer): the observation is still registered")
            try await writer.write { db in try db.execute("INSERT INTO note(title) VALUES ('after')") }
        }
    }

    /// Another process (SQLCipher 4.19, through Python's `sqlcipher3`)
    /// commits to the file: an observation that asked for it hears of it; one
    /// that did not is not fetched again (only the writer's hooks reach it).
    func testAnotherProcessWriteIsNoticedWhenAsked() async throws {
        for writer in try makeWriters() {
            let unaskedFetches = Counter()
            let unasked = Values(writer.observeValues { db -> Int in
                unaskedFetches.increment()
                return try db.fetchScalar(Int.self, "SELECT count(*) FROM note") ?? -1
            })
            let asked = Values(writer.observeValues(checkingOtherProcessesEvery: .milliseconds(20)) { db in
                try db.fetchScalar(Int.self, "SELECT count(*) FROM note") ?? -1
            })
            let firstAsked = try await asked.next(), firstUnasked = try await unasked.next()
            XCTAssertEqual(firstAsked, 0, "\(writer)")
            XCTAssertEqual(firstUnasked, 0, "\(writer)")
            XCTAssertTrue(writer.isCheckingOtherProcesses, "\(writer)")

            try runPeer(writer.path, key: TestKeys.text(named: passphrase), """
                import sqlcipher3
                db = sqlcipher3.connect(path)
                db.execute('PRAGMA key = "' + key + '"')
                db.execute("INSERT INTO note(title) VALUES ('from another process')")
                db.commit()
                """)
            let second = try await asked.next()
            XCTAssertEqual(second, 1, "\(writer): the other process's insert")
            XCTAssertEqual(unaskedFetches.value, 1, "\(writer): an observation that did not ask fetched again")

            // Its own commits are heard once, through the hooks, not again by the poll.
            try await writer.write { db in try db.execute("INSERT INTO note(title) VALUES ('own')") }
            let third = try await asked.next()
            XCTAssertEqual(third, 2, "\(writer)")
            // The next own commit's value comes next: the last one was not delivered again.
            try await writer.write { db in try db.execute("INSERT INTO note(title) VALUES ('own again')") }
            let fourth = try await asked.next()
            XCTAssertEqual(fourth, 3, "\(writer): the writer's own commit was delivered twice")

            asked.cancel()
            let stopped = await waitUntil(timeout: 10) { !writer.isCheckingOtherProcesses }
            XCTAssertTrue(stopped, "\(writer): still polling after the observation ended")
        }
    }

    /// A pool fetches on a reader: once a first observation has installed
    /// the writer's hooks, an observation started while a write transaction
    /// is open gets its first value (the last commit) before that write ends.
    func testOnAPoolAnObservationStartsWhileAWriteIsOpen() async throws {
        let pool = try XCTUnwrap(try makeWriters().first as? DatabasePool)
        let count: @Sendable (Database) throws -> Int = { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM note") ?? -1 }
        let earlier = Values(pool.observe(count))
        _ = try await earlier.next()

        let writing = DispatchSemaphore(value: 0), finish = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? pool.write { db in
                try db.execute("INSERT INTO note(title) VALUES ('not yet committed')")
                writing.signal()
                finish.wait()
            }
        }
        let open = await waitUntil { writing.wait(timeout: .now()) == .success }
        XCTAssertTrue(open, "the write transaction never opened")
        let values = Values(pool.observe(count))
        let first = try await values.next(timeout: 5)
        finish.signal()
        XCTAssertEqual(first, 0, "the first value waited for the write, or saw it uncommitted")
        let second = try await values.next()
        XCTAssertEqual(second, 1)
    }

    /// A pool's key change reopens its writer: observations go on seeing
    /// its commits after a change that failed and after one that succeeded.
    func testOnAPoolObservationsOutliveAKeyChange() async throws {
        let pool = try XCTUnwrap(try makeWriters().first as? DatabasePool)
        let values = Values(pool.observe { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM note") ?? -1 })
        let first = try await values.next()
        XCTAssertEqual(first, 0)
        XCTAssertThrowsError(try pool.changeKey(to: .passphrase(""))) { error in
            guard case CipherError.invalidKey = error else { return XCTFail("\(error)") }
        }
        try await pool.write { db in try db.execute("INSERT INTO note(title) VALUES ('after a failed key change')") }
        let second = try await values.next()
        XCTAssertEqual(second, 1, "no value after a failed key change")
        try pool.changeKey(to: .named("observation tests new passphrase"))
        try await pool.write { db in try db.execute("INSERT INTO note(title) VALUES ('after a key change')") }
        let third = try await values.next()
        XCTAssertEqual(third, 2, "no value after a key change")
    }

    /// Right after a pool's key change, its writer is a new connection whose
    /// data version cannot be compared with the old one's: another
    /// connection's commit before the next poll is still noticed.
    func testOnAPoolAnotherConnectionsCommitRightAfterAKeyChangeIsNoticed() async throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("pool.db").path
        let oldKey = try DatabaseKey(rawKey: [UInt8](repeating: 1, count: 32)), newKey = try DatabaseKey(rawKey: [UInt8](repeating: 2, count: 32))
        let pool = try DatabasePool(path: path, key: oldKey)
        try await pool.write { db in try db.execute("CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT)") }
        let values = Values(pool.observe(checkingOtherProcessesEvery: .seconds(1)) { db in
            try db.fetchScalar(Int.self, "SELECT count(*) FROM note") ?? -1
        })
        let first = try await values.next()
        XCTAssertEqual(first, 0)
        try pool.changeKey(to: newKey)
        let other = try Database(path: path, key: newKey)
        try other.execute("INSERT INTO note(title) VALUES ('from another connection')")
        other.close()
        // A poll between the key change and that commit may deliver 0 again (the new writer has no
        // data version to compare with): a later one must see the commit.
        var second = try await values.next()
        if second == 0 { second = try await values.next() }
        XCTAssertEqual(second, 1, "the other connection's commit was not noticed")
    }

    func testAFetchThatFailsEndsTheSequenceWithItsError() async throws {
        for writer in try makeWriters() {
            let values = Values(writer.observeValues { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM missing_table") ?? -1 })
            do {
                _ = try await values.next()
                XCTFail("\(writer): no error")
            } catch let error as DatabaseError {
                XCTAssertTrue("\(error)".contains("no such table: missing_table"), "\(error)")
            }
        }
    }
}

/// What these tests need of a queue and of a pool alike.
protocol ObservedWriter: DatabaseWriter {
    func observeValues<T: Sendable>(
        checkingOtherProcessesEvery: Duration?, _ fetch: @escaping @Sendable (Database) throws -> T
    ) -> AsyncThrowingStream<T, Error>
    func observeDistinctValues<T: Sendable & Equatable>(_ fetch: @escaping @Sendable (Database) throws -> T) -> AsyncThrowingStream<T, Error>
    var observationCount: Int { get }
    var isCheckingOtherProcesses: Bool { get }
}

extension ObservedWriter {
    func observeValues<T: Sendable>(_ fetch: @escaping @Sendable (Database) throws -> T) -> AsyncThrowingStream<T, Error> {
        observeValues(checkingOtherProcessesEvery: nil, fetch)
    }
}

extension DatabasePool: ObservedWriter {
    func observeValues<T: Sendable>(
        checkingOtherProcessesEvery interval: Duration?, _ fetch: @escaping @Sendable (Database) throws -> T
    ) -> AsyncThrowingStream<T, Error> {
        observe(checkingOtherProcessesEvery: interval, fetch)
    }
    func observeDistinctValues<T: Sendable & Equatable>(_ fetch: @escaping @Sendable (Database) throws -> T) -> AsyncThrowingStream<T, Error> {
        observe(removingDuplicates: true, fetch)
    }
}

extension DatabaseQueue: ObservedWriter {
    func observeValues<T: Sendable>(
        checkingOtherProcessesEvery interval: Duration?, _ fetch: @escaping @Sendable (Database) throws -> T
    ) -> AsyncThrowingStream<T, Error> {
        observe(checkingOtherProcessesEvery: interval, fetch)
    }
    func observeDistinctValues<T: Sendable & Equatable>(_ fetch: @escaping @Sendable (Database) throws -> T) -> AsyncThrowingStream<T, Error> {
        observe(removingDuplicates: true, fetch)
    }
}

/// The values of an observation, collected by a task of their own, so that
/// waiting for one can time out (a regression then fails instead of hanging).
private final class Values<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var received: [T] = []
    private var failure: Error?
    private var consumed = 0
    private var task: Task<Void, Never>?

    init(_ stream: AsyncThrowingStream<T, Error>) {
        task = Task {
            do {
                for try await value in stream { self.append(value) }
            } catch {
                self.fail(error)
            }
        }
    }

    deinit { task?.cancel() }

    /// Ends the observation.
    func cancel() { task?.cancel() }

    /// How many values arrived that were not taken yet.
    var pending: Int {
        lock.lock()
        defer { lock.unlock() }
        return received.count - consumed
    }

    private func append(_ value: T) {
        lock.lock()
        received.append(value)
        lock.unlock()
    }

    private func fail(_ error: Error) {
        lock.lock()
        failure = error
        lock.unlock()
    }

    /// The next value not taken yet, or the error that ended the sequence.
    private func take() -> (T?, Error?) {
        lock.lock()
        defer { lock.unlock() }
        guard consumed < received.count else { return (nil, failure) }
        consumed += 1
        return (received[consumed - 1], nil)
    }

    /// The next value, or the sequence's error; fails after `timeout` seconds.
    func next(timeout: Double = 10) async throws -> T? {
        var taken: (T?, Error?) = (nil, nil)
        guard await waitUntil(timeout: timeout, { taken = take(); return taken.0 != nil || taken.1 != nil }) else {
            XCTFail("no value within \(timeout) seconds")
            return nil
        }
        if let error = taken.1 { throw error }
        return taken.0
    }
}
