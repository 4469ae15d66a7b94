import CSQLCipher
import DBCrypt
import Foundation
import Synchronization

/// W10: backups of an open database. A writer's commit rate while a
/// snapshot backup runs in a loop, and while a continuous backup ships,
/// against its rate alone; a pool's `backup(to:)` against a bare
/// `ATTACH ... KEY` + `sqlcipher_export` of the same file (both with the
/// raw key: no key derivation on either side); a restore against the
/// snapshot it starts from.
func runBackupBenchmark(rounds: Int, rows count: Int) throws {
    _ = try CipherInfo.linked()
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let hex = String(repeating: "0123456789abcdef", count: 4)
    let key = try DatabaseKey(sqlcipherRawKey: "x'\(hex)'")
    let path = dir.appendingPathComponent("app.db").path
    let setup = try DatabasePool(path: path, key: key)
    try setup.write { db in try db.execute(createTableSQL + "; CREATE INDEX item_by_b ON item(b)") }
    let rows = BenchmarkRows(count: count)
    try setup.write { db in
        for i in 0..<count {
            let (a, b, c) = rows.integers[i], (d, e) = rows.reals[i], (f, g, h) = rows.texts[i]
            try db.execute(insertSQL, [a, b, c, d, e, f, g, h])
        }
    }
    _ = try setup.checkpoint(.truncate)
    try setup.close()

    print("W10 backups of a \(count)-row database (\(SiblingSize.megabytes(path)) MB), SQLCipher 4, raw key, \(rounds) rounds (wall clock)")
    let otherHex = String(repeating: "fedcba9876543210", count: 4)
    let otherKey = try DatabaseKey(sqlcipherRawKey: "x'\(otherHex)'")
    var bare = Samples(), ours = Samples(), bareOther = Samples(), oursOther = Samples()
    for round in 0..<rounds {
        let pool = try DatabasePool(path: path, key: key)
        let bareCopy = dir.appendingPathComponent("bare-\(round).db").path
        bare.add(seconds { bareCopyExport(from: path, to: bareCopy, key: "x'\(hex)'") })
        let copy = dir.appendingPathComponent("copy-\(round).db").path
        ours.add(try seconds { try pool.backup(to: copy) })
        let bareOtherCopy = dir.appendingPathComponent("bare-other-\(round).db").path
        bareOther.add(seconds { bareCopyExport(from: path, to: bareOtherCopy, key: "x'\(hex)'", targetKey: "x'\(otherHex)'") })
        let otherCopy = dir.appendingPathComponent("other-\(round).db").path
        oursOther.add(try seconds { try pool.backup(to: otherCopy, key: .using(otherKey)) })
        try pool.close()
        for file in [bareCopy, copy, bareOtherCopy, otherCopy] { try FileManager.default.removeItem(atPath: file) }
    }
    print("  snapshot        bare export \(milliseconds(bare.median))   pool.backup(to:) \(milliseconds(ours.median))   speed \(ratio(bare.median, ours.median)) of the bare export")
    print("  another key     bare export \(milliseconds(bareOther.median))   pool.backup(to:key: .using) \(milliseconds(oursOther.median))   speed \(ratio(bareOther.median, oursOther.median)) of the bare export")

    let window = 2.0
    var alone = Samples(), duringSnapshots = Samples(), duringNiceSnapshots = Samples(), duringContinuous = Samples(), duringOne = Samples()
    for round in 0..<rounds {
        let pool = try DatabasePool(path: path, key: key)
        alone.add(try commitRate(pool, for: window))
        duringOne.add(try commitRateDuringSingleBackups(pool, count: 10, prefix: dir.appendingPathComponent("one-\(round)").path))
        duringSnapshots.add(try commitRate(pool, for: window, whileBackingUpTo: dir.appendingPathComponent("during-\(round)").path, nice: 0))
        duringNiceSnapshots.add(try commitRate(pool, for: window, whileBackingUpTo: dir.appendingPathComponent("nice-\(round)").path, nice: 10))
        try pool.close()

        let destination = dir.appendingPathComponent("continuous-\(round)").path
        var options = Database.Options()
        options.continuousBackup = .init(storage: try DirectoryBackupStorage(path: destination))
        let backedUp = try DatabasePool(path: path, key: key, options: options)
        duringContinuous.add(try commitRate(backedUp, for: window))
        if round == 0 { print("  (WAL after the continuous backup's window: \(SiblingSize.megabytes(path + "-wal")) MB)") }
        try backedUp.close()
        try FileManager.default.removeItem(atPath: destination)
    }
    print("  commits/s       alone \(String(format: "%8.0f", alone.median))   while one backup runs (10 backups, 0.2 s apart) \(String(format: "%8.0f", duringOne.median))   ratio \(ratio(duringOne.median, alone.median))")
    print("  commits/s       alone \(String(format: "%8.0f", alone.median))   during snapshots back to back \(String(format: "%8.0f", duringSnapshots.median))   ratio \(ratio(duringSnapshots.median, alone.median))")
    print("  commits/s       alone \(String(format: "%8.0f", alone.median))   during snapshots on a nice 10 thread \(String(format: "%8.0f", duringNiceSnapshots.median))   ratio \(ratio(duringNiceSnapshots.median, alone.median))")
    print("  commits/s       alone \(String(format: "%8.0f", alone.median))   continuous backup \(String(format: "%7.0f", duringContinuous.median))   ratio \(ratio(duringContinuous.median, alone.median))")
    try restoreBenchmark(dir: dir, path: path, key: key, hex: hex, rows: count, rounds: rounds)
}

/// Commits per second counted only while a backup runs on another thread:
/// `count` backups, each started 0.2 s after the one before ended (writes go on between them, uncounted).
private func commitRateDuringSingleBackups(_ pool: DatabasePool, count: Int, prefix: String) throws -> Double {
    var commits = 0
    var elapsed = 0.0
    for n in 0..<count {
        let done = Mutex(false)
        let copy = prefix + "-\(n).db"
        let start = DispatchTime.now().uptimeNanoseconds
        let backupThread = Thread {
            try? pool.backup(to: copy)
            done.withLock { $0 = true }
        }
        backupThread.start()
        while !done.withLock({ $0 }) {
            try pool.write { db in try db.execute("INSERT INTO item(a, f) VALUES (?, 'a row written during the window')", [commits]) }
            commits += 1
        }
        elapsed += Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        try? FileManager.default.removeItem(atPath: copy)
        _ = try commitRate(pool, for: 0.2)
    }
    return Double(commits) / elapsed
}

/// Commits per second while another thread (at `nice`) backs the pool up again and again.
private func commitRate(_ pool: DatabasePool, for window: Double, whileBackingUpTo prefix: String, nice: Int32) throws -> Double {
    let stop = Mutex(false)
    let backupThread = Thread {
        // On Linux the nice value belongs to the thread: who 0 is this thread.
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice)
        var n = 0
        while !stop.withLock({ $0 }) {
            let copy = prefix + "-\(n).db"
            try? pool.backup(to: copy)
            try? FileManager.default.removeItem(atPath: copy)
            n += 1
        }
    }
    backupThread.start()
    let rate = try commitRate(pool, for: window)
    stop.withLock { $0 = true }
    while !backupThread.isFinished { usleep(1_000) }
    return rate
}

/// A restore: the snapshot of the whole file, then the frames of 20 commits of 100 updates each.
private func restoreBenchmark(dir: URL, path: String, key: DatabaseKey, hex: String, rows count: Int, rounds: Int) throws {
    let destination = dir.appendingPathComponent("restore-source").path
    var backupOptions = ContinuousBackup.Options()
    backupOptions.interval = .seconds(3600)
    var options = Database.Options()
    options.continuousBackup = .init(storage: try DirectoryBackupStorage(path: destination), options: backupOptions)
    let pool = try DatabasePool(path: path, key: key, options: options)
    for _ in 0..<20 {
        try pool.write { db in
            for i in 0..<100 { try db.execute("UPDATE item SET b = b + 1 WHERE rowid = ?", [i * 997 % count + 1]) }
        }
        try pool.continuousBackup?.shipNow()
    }
    try pool.close()
    let storage = try DirectoryBackupStorage(path: destination)
    var restores = Samples(), copies = Samples()
    for round in 0..<rounds {
        let out = dir.appendingPathComponent("restored-\(round).db").path
        restores.add(try seconds { try ContinuousBackup.restore(from: storage, key: key, to: out) })
        let copy = dir.appendingPathComponent("plain-copy-\(round).db").path
        copies.add(seconds { bareCopyExport(from: out, to: copy, key: "x'\(hex)'") })
        try FileManager.default.removeItem(atPath: out)
        try FileManager.default.removeItem(atPath: copy)
    }
    print("  restore latest  bare export of the result \(milliseconds(copies.median))   restore \(milliseconds(restores.median))   ratio \(ratio(restores.median, copies.median))")
}

/// Single-row commits through `pool` for `window` seconds: commits per second.
func commitRate(_ pool: DatabasePool, for window: Double) throws -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    var commits = 0
    while Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 < window {
        try pool.write { db in try db.execute("INSERT INTO item(a, f) VALUES (?, 'a row written during the window')", [commits]) }
        commits += 1
    }
    return Double(commits) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
}

/// The published recipe through the raw C API with the same raw key on
/// both sides: open, `ATTACH ... KEY`, `sqlcipher_export`, `DETACH`; no
/// checks, no atomic replace.
private func bareCopyExport(from source: String, to destination: String, key: String, targetKey: String? = nil) {
    var db: OpaquePointer?
    sqlite3_open_v2(source, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)   // ATTACH inherits the flags
    defer { sqlite3_close_v2(db) }
    _ = dbcrypt_provider_select_mode_sha512 { sqlite3_key_v2(db, "main", key, Int32(key.utf8.count)) }
    sqlite3_exec(db, "PRAGMA cipher_page_size = 4096", nil, nil, nil)
    var attach: OpaquePointer?
    sqlite3_prepare_v2(db, "ATTACH DATABASE ? AS target KEY ?", -1, &attach, nil)
    sqlite3_bind_text(attach, 1, destination, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
    sqlite3_bind_text(attach, 2, targetKey ?? key, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
    let attached = dbcrypt_provider_select_mode_sha512 { sqlite3_step(attach) }
    sqlite3_finalize(attach)
    guard attached == SQLITE_DONE else { fatalError("attach failed: \(String(cString: sqlite3_errmsg(db)))") }
    sqlite3_exec(db, "PRAGMA target.cipher_page_size = 4096", nil, nil, nil)
    guard sqlite3_exec(db, "SELECT sqlcipher_export('target'); DETACH DATABASE target", nil, nil, nil) == SQLITE_OK else {
        fatalError("bare export failed: \(String(cString: sqlite3_errmsg(db)))")
    }
}
