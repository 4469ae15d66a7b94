import CPrimitives
import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import DBCrypt

/// DatabasePool on real encrypted files: reads beside a long write, snapshot
/// isolation, readers at once, the key derived once, re-entrance, closing.
final class DatabasePoolTests: XCTestCase {
    let key = DatabaseKey.named("pool tests passphrase")
    var path: String!

    override func setUpWithError() throws {
        path = try makeTemporaryDirectory(self).appendingPathComponent("pool.db").path
    }

    private func makePool(readers: Int = 4) throws -> DatabasePool {
        var options = Database.Options()
        options.maximumReaderCount = readers
        return try TestFixtures.makePool(path, key: key, options: options,
                                         schema: "CREATE TABLE IF NOT EXISTS note(id INTEGER PRIMARY KEY, title TEXT)")
    }

    func testANewPoolIsAnEncryptedWALDatabaseThatOpensWithThePassphrase() throws {
        let pool = try makePool()
        try pool.write { db in try db.execute("INSERT INTO note(title) VALUES ('one'), ('two')") }
        XCTAssertEqual(try pool.read(count), 2)
        XCTAssertEqual(try pool.writeWithoutTransaction { db in try db.fetchScalar(String.self, "PRAGMA journal_mode") }, "wal")
        try pool.close()
        XCTAssertEqual(try FileFormat.detect(at: path), .notPlaintext)
        let db = try Database(path: path, key: key)
        XCTAssertEqual(try count(db), 2)
        XCTAssertThrowsError(try DatabasePool(path: path, key: .named("wrong"))) { error in
            XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: path))
        }
    }

    /// One derivation for the writer and every reader, new file or existing,
    /// SQLCipher 4 or 3 (the other format found on the second try).
    func testThePassphraseIsDerivedOncePerPool() throws {
        let key = DatabaseKey.passphrase("pool tests passphrase")
        for cipher in [CipherSettings.sqlcipher4, .sqlcipher3] {
            try? FileManager.default.removeItem(atPath: path)
            var options = Database.Options()
            options.cipher = cipher
                options.maximumReaderCount = 5
            let before = dbcrypt_key_derivations()
            let pool = try DatabasePool(path: path, key: key, options: options)
            try pool.write { db in try db.execute("CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT)") }
            try readAtOnce(pool, readers: 5)
            XCTAssertEqual(dbcrypt_key_derivations() - before, 1, "\(cipher.format): a new file")
            // The counter counts DBCrypt's derivations; SQLCipher 4.x would
            // derive a passphrase itself: every reader has the raw key.
            XCTAssertEqual(pool.readerKeyKind, .rawWithSalt, "\(cipher.format): the readers' key")
            try pool.close()

            let reopened = dbcrypt_key_derivations()
            let again = try DatabasePool(path: path, key: key, options: options)
            try readAtOnce(again, readers: 5)
            try again.releaseMemory()
            try readAtOnce(again, readers: 5)
            XCTAssertEqual(dbcrypt_key_derivations() - reopened, 1, "\(cipher.format): an existing file")
            XCTAssertEqual(again.readerKeyKind, .rawWithSalt, "\(cipher.format): the readers' key")
        }
        // A SQLCipher 3 file opened with the default (SQLCipher 4) settings: one try each.
        let before = dbcrypt_key_derivations()
        let pool = try DatabasePool(path: path, key: key)
        try readAtOnce(pool, readers: 2)
        XCTAssertEqual(dbcrypt_key_derivations() - before, 2)
    }

    /// A wrong passphrase costs one key derivation per format tried, however
    /// the file is opened: DBCrypt derives it, once, on every engine.
    func testAWrongPassphraseCostsOneDerivationPerFormatTried() throws {
        try DatabasePool(path: path, key: .passphrase("pool tests passphrase")).close()
        let wrong = DatabaseKey.passphrase("not the pool's passphrase")
        var oneFormat = Database.Options()
        oneFormat.tryOtherFormat = false
        let opens: [(String, Int, () throws -> Void)] = [
            ("Database", 2, { _ = try Database(path: self.path, key: wrong) }),
            ("DatabaseQueue", 2, { _ = try DatabaseQueue(path: self.path, key: wrong) }),
            ("DatabasePool", 2, { _ = try DatabasePool(path: self.path, key: wrong) }),
            ("Database, one format", 1, { _ = try Database(path: self.path, key: wrong, options: oneFormat) }),
            ("DatabasePool, one format", 1, { _ = try DatabasePool(path: self.path, key: wrong, options: oneFormat) }),
        ]
        for (name, expected, open) in opens {
            let before = dbcrypt_key_derivations()
            XCTAssertThrowsError(try open(), name) { error in
                XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: path), name)
            }
            XCTAssertEqual(dbcrypt_key_derivations() - before, expected, name)
        }
    }

    /// Runs `readers` reads that are all inside their closures at once:
    /// proof that they read concurrently, each on its own connection.
    private func readAtOnce(_ pool: DatabasePool, readers: Int) throws {
        let inside = DispatchGroup()
        let release = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let failures = Failures()
        for _ in 0..<readers {
            inside.enter()
            done.enter()
            DispatchQueue.global().async {
                defer { done.leave() }
                do {
                    _ = try pool.read { db in
                        inside.leave()
                        release.wait()
                        return try count(db)
                    }
                } catch {
                    failures.add(error)
                }
            }
        }
        XCTAssertEqual(inside.wait(timeout: .now() + 30), .success, "\(readers) reads did not run at once")
        for _ in 0..<readers { release.signal() }
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(failures.all, [])
    }

    func testAReadFinishesWhileAWriteTransactionIsOpenAndSeesTheLastCommit() throws {
        let pool = try makePool()
        try pool.write { db in try db.execute("INSERT INTO note(title) VALUES ('committed')") }
        let writing = DispatchSemaphore(value: 0), finish = DispatchSemaphore(value: 0)
        let writeDone = DispatchGroup()
        writeDone.enter()
        DispatchQueue.global().async {
            defer { writeDone.leave() }
            try? pool.write { db in
                try db.execute("INSERT INTO note(title) VALUES ('not yet committed')")
                writing.signal()
                finish.wait()
            }
        }
        writing.wait()
        XCTAssertEqual(try pool.read(count), 1, "a read sees the last commit, not the open write")
        finish.signal()
        writeDone.wait()
        XCTAssertEqual(try pool.read(count), 2)
    }

    func testAReadKeepsItsSnapshotWhileWritesCommit() throws {
        let pool = try makePool()
        try pool.write { db in try db.execute("INSERT INTO note(title) VALUES ('first')") }
        let counts = try pool.read { db -> [Int] in
            let before = try count(db)
            let committed = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                try? pool.write { db in try db.execute("INSERT INTO note(title) VALUES ('during the read')") }
                committed.signal()
            }
            committed.wait()
            return [before, try count(db)]
        }
        XCTAssertEqual(counts, [1, 1])
        XCTAssertEqual(try pool.read(count), 2)
    }

    func testReadersCannotWrite() throws {
        let pool = try makePool()
        XCTAssertThrowsError(try pool.read { db in try db.execute("INSERT INTO note(title) VALUES ('no')") }) { error in
            XCTAssertEqual((error as? DatabaseError)?.resultCode, 8)   // SQLITE_READONLY
        }
        XCTAssertEqual(try pool.read(count), 0)
    }

    /// Every call that would wait for the pool itself, from inside a read or
    /// a write, with one reader or several, is an error, never a hang:
    /// each runs on another thread that must finish within seconds.
    func testCallingThePoolFromItsOwnClosuresIsReported() throws {
        for readers in [1, 4] {
            let pool = try makePool(readers: readers)
            let misuses: [(String, @Sendable (DatabasePool) throws -> Void)] = [
                ("read", { pool in _ = try pool.read { _ in 1 } }),
                ("write", { pool in _ = try pool.write { _ in 1 } }),
                ("barrierWriteWithoutTransaction", { pool in _ = try pool.barrierWriteWithoutTransaction { _ in 1 } }),
                ("changeKey", { pool in try pool.changeKey(to: .named("another")) }),
                ("close", { pool in try pool.close() }),
            ]
            let outerCalls: [(String, @Sendable (DatabasePool, () throws -> Void) throws -> Void)] = [
                ("read", { pool, inner in try pool.read { _ in try inner() } }),
                ("write", { pool, inner in try pool.write { _ in try inner() } }),
            ]
            for (outerName, outer) in outerCalls {
                for (name, misuse) in misuses {
                    let error = try finishing("\(name) inside a \(outerName), \(readers) reader(s)", pool) {
                        var caught: Error?
                        try outer(pool) {
                            do { try misuse(pool) } catch { caught = error }
                        }
                        return caught
                    }
                    XCTAssertEqual(error as? DatabaseError, .reentrantQueueAccess, "\(name) inside a \(outerName), \(readers) reader(s)")
                }
            }
            // concurrentRead from a read, and from a concurrent read's own closure, waits for a
            // permit while it holds one: refused. (The messages are the errors' descriptions.)
            // So is one from a barrier write, which keeps every read out until it returns.
            let refusals = Failures()
            let done = DispatchSemaphore(value: 0)
            let recordRefusal: @Sendable (Result<Database, Error>) -> Void = { result in
                if case let .failure(error) = result { refusals.add(error) }
                done.signal()
            }
            let holders: [(String, @Sendable (DatabasePool, () -> Void) throws -> Void)] = [
                ("read", { pool, inner in try pool.read { _ in inner() } }),
                ("barrier write", { pool, inner in try pool.barrierWriteWithoutTransaction { _ in inner() } }),
            ]
            for (holderName, holder) in holders {
                _ = try finishing("concurrentRead inside a \(holderName), \(readers) reader(s)", pool) {
                    try holder(pool) { pool.concurrentRead(recordRefusal) }
                    return nil
                }
            }
            try pool.writeWithoutTransaction { _ in
                pool.concurrentRead { _ in pool.concurrentRead(recordRefusal) }
            }
            for _ in 0..<3 { XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "a refused concurrentRead never reported") }
            XCTAssertEqual(refusals.all.count, 3)
            XCTAssertEqual(refusals.all.filter { $0.contains("concurrentRead must be called from inside one of the pool's write closures") }.count, 2,
                           "\(refusals.all)")
            XCTAssertEqual(refusals.all.filter { $0.contains("concurrentRead cannot be called from a barrier write") }.count, 1, "\(refusals.all)")
            // The pool still works afterwards.
            XCTAssertEqual(try pool.read(count), 0)
            try pool.close()
        }
    }

    /// Runs `body` on another thread and returns what it returns; throws
    /// instead of waiting past 10 seconds (a hang), and then keeps `pool`
    /// alive for good: closing it would wait for the hung call too.
    private func finishing(_ name: String, _ pool: DatabasePool, _ body: @escaping @Sendable () throws -> Error?) throws -> Error? {
        let result = Mutex<Result<Error?, Error>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let outcome = Result { try body() }
            result.withLock { $0 = outcome }
            finished.signal()
        }
        guard finished.wait(timeout: .now() + 10) == .success else {
            hungPools.withLock { $0.append(pool) }
            throw Hang(name: name)
        }
        return try result.withLock { $0! }.get()
    }

    func testAsyncReadsAndWrites() async throws {
        let pool = try makePool()
        try await pool.write { db in try db.execute("INSERT INTO note(title) VALUES ('async')") }
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { try await pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM note") ?? -1 } } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(counts, Array(repeating: 1, count: 8))
    }

    /// A barrier waits for the reads under way and keeps new ones out; a
    /// truncating checkpoint then empties the WAL.
    func testABarrierWaitsForReadsAndACheckpointTruncatesTheWAL() throws {
        let pool = try makePool(readers: 2)
        try pool.write { db in
            for i in 0..<200 { try db.execute("INSERT INTO note(title) VALUES (?)", ["note \(i)"]) }
        }
        let reading = DispatchSemaphore(value: 0), finish = DispatchSemaphore(value: 0)
        let order = Failures()
        DispatchQueue.global().async {
            _ = try? pool.read { db in
                reading.signal()
                finish.wait()
                order.add(DatabaseError.cancelled)   // "the read ended"
                return try count(db)
            }
        }
        reading.wait()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { finish.signal() }
        try pool.barrierWriteWithoutTransaction { db in
            XCTAssertEqual(order.all.count, 1, "the barrier ran before the read ended")
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int, 0)
        try pool.write { db in try db.execute("INSERT INTO note(title) VALUES ('after')") }
        XCTAssertTrue(try pool.checkpoint(.truncate))
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int, 0)
        XCTAssertEqual(try pool.read(count), 201)
    }

    func testClosingWaitsForWorkAndLaterCallsThrow() throws {
        let pool = try makePool()
        try pool.write { db in try db.execute("INSERT INTO note(title) VALUES ('x')") }
        XCTAssertEqual(try pool.read(count), 1)
        try pool.close()
        try pool.close()
        XCTAssertThrowsError(try pool.read(count)) { XCTAssertEqual($0 as? DatabaseError, .connectionClosed) }
        XCTAssertThrowsError(try pool.write(count)) { XCTAssertEqual($0 as? DatabaseError, .connectionClosed) }
    }

    /// Readers read in a loop while the key changes: none fails, reads that
    /// begin after it returns use the new key, and the file opens with the
    /// new key only.
    func testAKeyChangeUnderLoadFailsNoRead() throws {
        let pool = try makePool(readers: 3)
        try pool.write { db in
            for i in 0..<500 { try db.execute("INSERT INTO note(title) VALUES (?)", ["note \(i)"]) }
        }
        let stop = Flag(), failures = Failures(), reads = Counter()
        let done = DispatchGroup()
        for _ in 0..<3 {
            done.enter()
            DispatchQueue.global().async {
                defer { done.leave() }
                while !stop.isRaised {
                    do {
                        let rows = try pool.read(count)
                        XCTAssertEqual(rows, 500)
                        reads.increment()
                    } catch {
                        failures.add(error)
                    }
                }
            }
        }
        assertEventually("the readers did not read") { reads.value >= 20 || !failures.all.isEmpty }
        let newKey = DatabaseKey.named("pool tests new passphrase")
        try pool.changeKey(to: newKey, newCipher: .sqlcipher3)
        let readsBefore = reads.value
        assertEventually("the readers did not read after the key change") { reads.value >= readsBefore + 20 || !failures.all.isEmpty }
        stop.raise()
        done.wait()
        XCTAssertEqual(failures.all, [])
        try pool.write { db in try db.execute("INSERT INTO note(title) VALUES ('after the key change')") }
        try pool.close()

        XCTAssertThrowsError(try Database(path: path, key: key)) { XCTAssertEqual($0 as? DatabaseError, .wrongKeyOrNotADatabase(path: path)) }
        let db = try Database(path: path, key: newKey)
        XCTAssertEqual(try count(db), 501)
        XCTAssertEqual(db.cipher?.format, .sqlcipher3)
    }

    func testTheMigratorRunsOnAPool() throws {
        let pool = try DatabasePool(path: path, key: key)
        var migrator = SchemaMigrator()
        migrator.registerMigration(1, "create") { db in try db.execute("CREATE TABLE tag(name TEXT)") }
        migrator.registerMigration(2, "fill") { db in try db.execute("INSERT INTO tag VALUES ('a'), ('b')") }
        XCTAssertEqual(try migrator.migrate(pool).count, 2)
        XCTAssertEqual(try migrator.status(pool).filter { $0.appliedAt == nil }.count, 0)
        XCTAssertEqual(try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM tag") }, 2)
    }

    /// Writes go on while readers read without pause: the WAL still starts
    /// over at the first commit past 4,000 frames, where the writer restarts
    /// it, so it does not grow with the number of writes. The reads that
    /// run end first and new ones wait, so the RESTART does not wait for
    /// the pool's own readers in vain (unless a read outlasts the busy timeout).
    func testTheWALStaysBoundedUnderASteadyReadLoad() throws {
        let pool = try makePool(readers: 2)
        let stop = Flag()
        let done = DispatchGroup()
        for _ in 0..<2 {
            done.enter()
            DispatchQueue.global().async {
                defer { done.leave() }
                while !stop.isRaised { _ = try? pool.read(count) }
            }
        }
        var largest = 0
        for i in 0..<4500 {
            try pool.write { db in try db.execute("INSERT INTO note(title) VALUES (?)", [String(repeating: "x", count: 3_000) + "\(i)"]) }
            largest = max(largest, (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0)
        }
        stop.raise()
        done.wait()
        // 4,500 writes of three frames each: an unbounded WAL would pass
        // 55 MB; 4,000 frames of 4 KiB pages and the commit that passes
        // them are 16.5 MB (a background checkpoint running adds a commit or two).
        XCTAssertLessThan(largest, 32 + 4_020 * 4_120, "the WAL grew to \(largest) bytes")
        XCTAssertEqual(pool.checkpointer.restartsWaitedInVain, 0)
        XCTAssertEqual(try pool.read(count), 4500)
    }

    /// A barrier write keeps reads out and the background checkpoints
    /// paused: the commit that fills the WAL restarts it at once, without
    /// waiting for the reads the barrier itself keeps out.
    func testABarrierWriteRestartsTheWALWithoutWaitingForItself() throws {
        let pool = try makePool(readers: 2)
        try pool.barrierWriteWithoutTransaction { db in
            for i in 0..<2_500 {
                try db.inTransaction { db in
                    try db.execute("INSERT INTO note(title) VALUES (?)", [String(repeating: "x", count: 3_000) + "\(i)"])
                }
            }
        }
        let walBytes = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        XCTAssertLessThan(walBytes, 32 + 4_020 * 4_120, "the WAL grew to \(walBytes) bytes")
        XCTAssertEqual(pool.checkpointer.restartsWaitedInVain, 0)
        XCTAssertEqual(try pool.read(count), 2_500)
    }

    /// A read handed off by the writer sees exactly what was committed when
    /// it was handed off, while the writer goes on writing.
    func testAConcurrentReadSeesTheStateTheWriterLeft() throws {
        let pool = try makePool()
        let seen = Failures(), done = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        try pool.writeWithoutTransaction { db in
            try db.inTransaction { db in try db.execute("INSERT INTO note(title) VALUES ('one'), ('two')") }
            pool.concurrentRead { result in
                proceed.wait()   // the writer commits more first
                do {
                    let db = try result.get()
                    seen.add(text: "\(try count(db)) rows")
                } catch {
                    seen.add(error)
                }
                done.signal()
            }
            try db.inTransaction { db in try db.execute("INSERT INTO note(title) VALUES ('three')") }
            proceed.signal()
        }
        done.wait()
        XCTAssertEqual(seen.all, ["2 rows"], "the read saw another state")
        XCTAssertEqual(try pool.read(count), 3)

        // Inside a transaction, or outside the writer, there is no committed state to hand off.
        let refused = DispatchSemaphore(value: 0)
        let errors = Failures()
        try pool.write { _ in
            pool.concurrentRead { result in
                if case .failure(let error) = result { errors.add(error) }
                refused.signal()
            }
        }
        pool.concurrentRead { result in
            if case .failure(let error) = result { errors.add(error) }
            refused.signal()
        }
        refused.wait()
        refused.wait()
        XCTAssertEqual(errors.all.count, 2, "\(errors.all)")
    }

    func testAReadOnlyPoolIsRefused() throws {
        var options = Database.Options()
        options.readOnly = true
        XCTAssertThrowsError(try DatabasePool(path: path, key: key, options: options))
    }
}

/// The rows of the note table.
private func count(_ db: Database) throws -> Int { try db.fetchScalar(Int.self, "SELECT count(*) FROM note") ?? -1 }

/// A count incremented from several threads.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func increment() {
        lock.lock()
        count += 1
        lock.unlock()
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}

/// Errors (or other lines) collected from several threads.
private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [String] = []

    func add(_ error: Error) { add(text: "\(error)") }

    func add(text: String) {
        lock.lock()
        errors.append(text)
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return errors
    }
}

/// A call that did not return: the test stops there.
private struct Hang: Error, CustomStringConvertible {
    let name: String
    var description: String { "\(name) hangs" }
}

/// Pools with a hung call, never released (their closing would hang too).
private let hungPools = Mutex<[DatabasePool]>([])
