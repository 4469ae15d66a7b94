import DBCrypt
import Dispatch
import Foundation

/// W6: DatabasePool. What opening a pool and using 5 readers costs against
/// one `Database` open (and against opening each connection with the
/// passphrase, as a pool that derives the key per connection does), and how
/// read throughput scales with 2 readers, with and without a writer.
func runPoolBenchmark(rounds: Int) throws {
    _ = try CipherInfo.linked()
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let key = DatabaseKey.passphrase("benchmark passphrase")
    let path = dir.appendingPathComponent("pool.db").path
    do {
        let db = try Database(path: path, key: key)
        try db.execute("PRAGMA journal_mode = WAL; CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        try db.inTransaction { db in for i in 0..<10_000 { try db.execute("INSERT INTO t(v) VALUES (?)", ["value \(i)"]) } }
        db.close()
    }
    var options = Database.Options()
    options.maximumReaderCount = 5

    print("W6 pool, passphrase, SQLCipher 4, \(rounds) rounds (wall clock)")
    var single = Samples(), pooled = Samples(), perConnection = Samples()
    for _ in 0..<rounds {
        single.add(try seconds {
            let db = try Database(path: path, key: key)
            _ = try db.fetchScalar(Int.self, "SELECT count(*) FROM t")
            db.close()
        })
        pooled.add(try seconds {
            let pool = try DatabasePool(path: path, key: key, options: options)
            try readAtOnce(pool, readers: 5)
            try pool.close()
        })
        perConnection.add(try seconds {
            // The writer and 5 readers, each deriving the key from the passphrase.
            var options = Database.Options()
            options.journalMode = .wal
            let connections = try (0..<6).map { i -> Database in
                options.readOnly = i > 0
                let db = try Database(path: path, key: key, options: options)
                _ = try db.fetchScalar(Int.self, "SELECT count(*) FROM t")
                return db
            }
            connections.forEach { $0.close() }
        })
    }
    print("  one Database: open + first query              \(milliseconds(single.median))")
    print("  DatabasePool: open + 5 readers at once + close \(milliseconds(pooled.median))   ratio \(ratio(pooled.median, single.median))")
    print("  6 connections keyed with the passphrase        \(milliseconds(perConnection.median))   ratio \(ratio(perConnection.median, single.median))")

    // Read throughput: the same reads on 1 reader, then shared by 2, each
    // with and without a writer committing small transactions meanwhile.
    let pool = try DatabasePool(path: path, key: key, options: options)
    defer { try? pool.close() }
    let reads = 400
    for withWriter in [false, true] {
        var one = Samples(), two = Samples()
        for _ in 0..<rounds {
            let stop = StopFlag()
            let writing = DispatchGroup()
            if withWriter {
                writing.enter()
                Thread.detachNewThread {
                    defer { writing.leave() }
                    var i = 0
                    while !stop.isSet {
                        _ = try? pool.write { db in try db.execute("UPDATE t SET v = ? WHERE id = ?", ["updated \(i)", i % 10_000 + 1]) }
                        i += 1
                    }
                }
            }
            one.add(try seconds { try readInParallel(pool, reads: reads, threads: 1) })
            two.add(try seconds { try readInParallel(pool, reads: reads, threads: 2) })
            stop.set()
            writing.wait()
        }
        let label = withWriter ? "with a writer" : "no writer    "
        print("  \(reads) reads (a scan of 10,000 rows each), \(label): 1 reader \(milliseconds(one.median)), "
              + "2 readers \(milliseconds(two.median)), throughput x\(String(format: "%.2f", one.median / two.median))")
    }
}

/// W7: observation through a pool. The time from a commit to the value it
/// causes, and what 100 observations of one table add to commits to another.
func runObservationBenchmark(rounds: Int) async throws {
    _ = try CipherInfo.linked()
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let pool = try DatabasePool(path: dir.appendingPathComponent("observed.db").path, key: .passphrase("benchmark passphrase"))
    defer { try? pool.close() }
    try await pool.write { db in
        try db.execute("CREATE TABLE watched(id INTEGER PRIMARY KEY, v TEXT); CREATE TABLE other(id INTEGER PRIMARY KEY, v TEXT)")
    }
    print("W7 observation through a pool, \(rounds) rounds (wall clock)")

    // Commits to an unobserved table: before any observation (no hooks installed), then with 100 of another table.
    let commits = 2_000
    func commitToOther() throws -> Double {
        try seconds {
            for i in 0..<commits { try pool.write { db in try db.execute("INSERT INTO other(v) VALUES (?)", ["\(i)"]) } }
        } / Double(commits)
    }
    var none = Samples(), hundred = Samples()
    var tasks: [Task<Void, Never>] = []
    for _ in 0..<rounds { none.add(try commitToOther()) }
    for _ in 0..<100 {
        let observed = pool.observe { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM watched") ?? 0 }
        tasks.append(Task { do { for try await _ in observed {} } catch {} })
    }
    try await Task.sleep(nanoseconds: 500_000_000)   // every first value fetched
    for _ in 0..<rounds { hundred.add(try commitToOther()) }
    tasks.forEach { $0.cancel() }
    print("  a commit to another table, never observed                \(String(format: "%8.1f µs", none.median * 1e6))")
    print("  a commit to another table, 100 observations of `watched` \(String(format: "%8.1f µs", hundred.median * 1e6))   ratio \(ratio(hundred.median, none.median))")

    // Latency: commit, then wait for the value that commit causes.
    var latency = Samples()
    let stream = pool.observe { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM watched") ?? 0 }
    var values = stream.makeAsyncIterator()
    _ = try await values.next()
    for round in 0..<(rounds * 20) {
        let start = DispatchTime.now().uptimeNanoseconds
        try await pool.write { db in try db.execute("INSERT INTO watched(v) VALUES (?)", ["\(round)"]) }
        _ = try await values.next()
        latency.add(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    print("  commit to delivered value (insert + fetch on a reader)   \(String(format: "%8.1f µs", latency.median * 1e6))")

    // Another connection's commits, which the writer's hooks never hear of (as
    // another process's): noticed through the writer's PRAGMA data_version.
    let interval = 50
    let other = try Database(path: pool.path, key: .passphrase("benchmark passphrase"))
    defer { other.close() }
    let polled = pool.observe(checkingOtherProcessesEvery: .milliseconds(interval)) { db in
        try db.fetchScalar(Int.self, "SELECT count(*) FROM watched") ?? 0
    }
    var polledValues = polled.makeAsyncIterator()
    _ = try await polledValues.next()
    var noticed = Samples()
    for round in 0..<(rounds * 4) {
        // At a random moment between two checks.
        try await Task.sleep(nanoseconds: UInt64.random(in: 0..<UInt64(interval) * 1_000_000))
        try other.execute("INSERT INTO watched(v) VALUES (?)", ["other \(round)"])
        let start = DispatchTime.now().uptimeNanoseconds
        _ = try await polledValues.next()
        noticed.add(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    let checks = 10_000
    let check = try seconds { for _ in 0..<checks { _ = try other.fetchScalar(Int.self, "PRAGMA data_version") } } / Double(checks)
    print("  another connection's commit to delivered value, checking every \(interval) ms: median "
        + "\(milliseconds(noticed.median)), min \(milliseconds(noticed.min)), max \(milliseconds(noticed.max))")
    print("  one check (PRAGMA data_version)                          \(String(format: "%8.1f µs", check * 1e6))"
        + "   \(String(format: "%.3f%%", check / (Double(interval) / 1000) * 100)) of the writer's time")
}

/// Runs `readers` reads that are inside their closures at once.
private func readAtOnce(_ pool: DatabasePool, readers: Int) throws {
    let inside = DispatchGroup(), done = DispatchGroup()
    let release = DispatchSemaphore(value: 0)
    for _ in 0..<readers {
        inside.enter()
        done.enter()
        Thread.detachNewThread {
            defer { done.leave() }
            _ = try? pool.read { db -> Int in
                inside.leave()
                release.wait()
                return try db.fetchScalar(Int.self, "SELECT count(*) FROM t") ?? 0
            }
        }
    }
    inside.wait()
    for _ in 0..<readers { release.signal() }
    done.wait()
}

/// `reads` scans shared among `threads` threads.
private func readInParallel(_ pool: DatabasePool, reads: Int, threads: Int) throws {
    let done = DispatchGroup()
    for t in 0..<threads {
        done.enter()
        Thread.detachNewThread {
            defer { done.leave() }
            for _ in stride(from: t, to: reads, by: threads) {
                _ = try? pool.read { db in try db.fetchScalar(Int.self, "SELECT sum(length(v)) FROM t") }
            }
        }
    }
    done.wait()
}

/// A flag one thread sets and another reads.
private final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }

    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}
