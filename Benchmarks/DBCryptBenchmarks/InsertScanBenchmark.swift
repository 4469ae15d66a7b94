import CSQLCipher
import DBCrypt
import Foundation

/// One row of W2 decoded through `Decodable`.
struct Item: Decodable {
    var a: Int64, b: Int64, c: Int64
    var d: Double, e: Double
    var f: String, g: String, h: String
}

/// W1 and W2: DBCrypt's API against the raw C API on the same SQLCipher and
/// settings, for each keying; interleaved rounds, wall-clock medians.
func runInsertScanBenchmark(rounds: Int, rows count: Int) throws {
    _ = try CipherInfo.linked()
    let rows = BenchmarkRows(count: count)
    print("W1 insert / W2 scan: \(count) rows of 8 columns, \(rounds) interleaved rounds, SQLCipher 3 format, synchronous = OFF, CPU time")
    for keying in Keying.allCases {
        var rawInsert = Samples(), apiInsert = Samples(), arrayInsert = Samples(), rawScanTime = Samples(), rawArrayScanTime = Samples(), cursorScan = Samples(), decodableScan = Samples(), decodedCursorScan = Samples()
        for _ in 0..<rounds {
            let dir = try scratchDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            // Raw C: insert, then scan on a fresh connection.
            let rawPath = dir.appendingPathComponent("raw.db").path
            var db = try rawConnection(rawPath, keying)
            sqlite3_exec(db, "PRAGMA synchronous = OFF; " + createTableSQL, nil, nil, nil)
            rawInsert.add(withExtendedLifetime(rows) { cpuSeconds { DBCryptBenchmarks.rawInsert(db, rows) } })
            sqlite3_close_v2(db)
            db = try rawConnection(rawPath, keying)
            var checksum = 0
            rawScanTime.add(cpuSeconds { checksum = rawScan(db) })
            sqlite3_close_v2(db)
            db = try rawConnection(rawPath, keying)
            var arrayChecksum = 0
            rawArrayScanTime.add(cpuSeconds { arrayChecksum = rawArrayScan(db) })
            sqlite3_close_v2(db)

            // DBCrypt's API on its own file.
            let apiPath = dir.appendingPathComponent("api.db").path
            var database = try Database(path: apiPath, key: keying.key, options: keying.options)
            try database.execute("PRAGMA synchronous = OFF")
            try database.execute(createTableSQL)
            apiInsert.add(try withExtendedLifetime(rows) { try cpuSeconds { try dbcryptInsert(database, rows) } })
            try database.execute("DELETE FROM item")
            arrayInsert.add(try withExtendedLifetime(rows) { try cpuSeconds { try dbcryptArrayInsert(database, rows) } })
            database.close()
            database = try Database(path: apiPath, key: keying.key, options: keying.options)
            var apiChecksum = 0
            cursorScan.add(try cpuSeconds { apiChecksum = try dbcryptCursorScan(database) })
            database.close()
            database = try Database(path: apiPath, key: keying.key, options: keying.options)
            var decodedChecksum = 0
            decodableScan.add(try cpuSeconds { decodedChecksum = try dbcryptDecodableScan(database) })
            database.close()
            database = try Database(path: apiPath, key: keying.key, options: keying.options)
            var cursorChecksum = 0
            decodedCursorScan.add(try cpuSeconds { cursorChecksum = try dbcryptDecodedCursorScan(database) })
            database.close()
            precondition(checksum == apiChecksum && checksum == decodedChecksum && checksum == cursorChecksum && checksum == arrayChecksum,
                         "the scans disagree")
        }
        print("  \(keying.rawValue)")
        print("    W1 insert   raw C \(milliseconds(rawInsert.median))   values: \(milliseconds(apiInsert.median))   ratio \(ratio(apiInsert.median, rawInsert.median))"
              + "   [array] \(milliseconds(arrayInsert.median))   ratio \(ratio(arrayInsert.median, rawInsert.median))")
        print("    W2 scan     raw C \(milliseconds(rawScanTime.median))   cursor  \(milliseconds(cursorScan.median))   ratio \(ratio(cursorScan.median, rawScanTime.median))"
              + "   Decodable \(milliseconds(decodableScan.median))   ratio \(ratio(decodableScan.median, rawScanTime.median))"
              + "   [cursor] \(milliseconds(decodedCursorScan.median))   ratio \(ratio(decodedCursorScan.median, rawScanTime.median))")
        print("    W2 scan into an array   raw C \(milliseconds(rawArrayScanTime.median))   Decodable ratio \(ratio(decodableScan.median, rawArrayScanTime.median))")
    }
}

/// W1 through DBCrypt: one prepared statement, one transaction, `execute(values:)`.
@inline(never) func dbcryptInsert(_ db: Database, _ rows: BenchmarkRows) throws {
    let insert = try db.makeStatement(insertSQL)
    try db.inTransaction { _ in
        for i in 0..<rows.count {
            let (a, b, c) = rows.integers[i]
            let (d, e) = rows.reals[i]
            let (f, g, h) = rows.texts[i]
            try insert.execute(values: a, b, c, d, e, f, g, h)
        }
    }
}

/// W1 through DBCrypt with an array of arguments, `execute([...])`.
func dbcryptArrayInsert(_ db: Database, _ rows: BenchmarkRows) throws {
    let insert = try db.makeStatement(insertSQL)
    try db.inTransaction { _ in
        for i in 0..<rows.count {
            let (a, b, c) = rows.integers[i]
            let (d, e) = rows.reals[i]
            let (f, g, h) = rows.texts[i]
            try insert.execute([a, b, c, d, e, f, g, h])
        }
    }
}

/// W2 through DBCrypt's cursor, reading each column as a Swift value.
@inline(never) func dbcryptCursorScan(_ db: Database) throws -> Int {
    let cursor = try db.query("SELECT a, b, c, d, e, f, g, h FROM item")
    var checksum = 0
    while let row = try cursor.next() {
        let a: Int64 = try row[0], b: Int64 = try row[1], c: Int64 = try row[2]
        let d: Double = try row[3], e: Double = try row[4]
        let f: String = try row[5], g: String = try row[6], h: String = try row[7]
        checksum &+= Int(a &+ b &+ c) &+ Int(d + e) &+ f.utf8.count &+ g.utf8.count &+ h.utf8.count
    }
    return checksum
}

/// W2 through SQLite's C API into an array of `Item`s: the raw loop's work
/// plus what `fetchAll` adds to it, every row kept (its Strings allocated
/// fresh, and freed with the array), so that `fetchAll` has a raw
/// counterpart doing the same work.
@inline(never) func rawArrayScan(_ db: OpaquePointer) -> Int {
    var statement: OpaquePointer?
    sqlite3_prepare_v2(db, "SELECT a, b, c, d, e, f, g, h FROM item", -1, &statement, nil)
    defer { sqlite3_finalize(statement) }
    var items: [Item] = []
    while sqlite3_step(statement) == SQLITE_ROW {
        items.append(Item(a: sqlite3_column_int64(statement, 0), b: sqlite3_column_int64(statement, 1), c: sqlite3_column_int64(statement, 2),
                          d: sqlite3_column_double(statement, 3), e: sqlite3_column_double(statement, 4),
                          f: String(cString: sqlite3_column_text(statement, 5)), g: String(cString: sqlite3_column_text(statement, 6)),
                          h: String(cString: sqlite3_column_text(statement, 7))))
    }
    var checksum = 0
    for item in items {
        checksum &+= Int(item.a &+ item.b &+ item.c) &+ Int(item.d + item.e) &+ item.f.utf8.count &+ item.g.utf8.count &+ item.h.utf8.count
    }
    return checksum
}

/// W2 through `Decodable`.
@inline(never) func dbcryptDecodableScan(_ db: Database) throws -> Int {
    var checksum = 0
    for item in try db.fetchAll(Item.self, "SELECT a, b, c, d, e, f, g, h FROM item") {
        checksum &+= Int(item.a &+ item.b &+ item.c) &+ Int(item.d + item.e) &+ item.f.utf8.count &+ item.g.utf8.count &+ item.h.utf8.count
    }
    return checksum
}

/// W2 through `Decodable`, one row at a time (`fetchCursor`): the raw loop's
/// work, each row read and then dropped, where `fetchAll` keeps them all.
@inline(never) func dbcryptDecodedCursorScan(_ db: Database) throws -> Int {
    var checksum = 0
    let items = try db.fetchCursor(Item.self, "SELECT a, b, c, d, e, f, g, h FROM item")
    while let item = try items.next() {
        checksum &+= Int(item.a &+ item.b &+ item.c) &+ Int(item.d + item.e) &+ item.f.utf8.count &+ item.g.utf8.count &+ item.h.utf8.count
    }
    return checksum
}

/// W2's cursor and `Decodable` scans alone, repeated, for a profiler (`perf record`): the
/// plaintext database keeps SQLCipher's cost out of the profile.
func runScanProfile(repeats: Int, rows count: Int) throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = dir.appendingPathComponent("scan.db").path
    let db = try Database(path: path)
    try db.execute(createTableSQL)
    try dbcryptInsert(db, BenchmarkRows(count: count))
    var checksum = 0, decodedChecksum = 0
    // Each loop starts with the allocator as clean as the next: freed chunks
    // left by the insert would otherwise be consolidated inside the first
    // loop measured (15 M instructions of callgrind's count).
    trimAllocator()
    let time = try cpuSeconds { for _ in 0..<repeats { checksum &+= try dbcryptCursorScan(db) } }
    trimAllocator()
    let decodableTime = try cpuSeconds { for _ in 0..<repeats { decodedChecksum &+= try dbcryptDecodableScan(db) } }
    var cursorChecksum = 0
    trimAllocator()
    let decodedCursorTime = try cpuSeconds { for _ in 0..<repeats { cursorChecksum &+= try dbcryptDecodedCursorScan(db) } }
    db.close()
    let raw = try rawConnection(path, .plaintext)
    var rawChecksum = 0
    trimAllocator()
    let rawTime = cpuSeconds { for _ in 0..<repeats { rawChecksum &+= rawScan(raw) } }
    var rawArrayChecksum = 0
    trimAllocator()
    for _ in 0..<repeats { rawArrayChecksum &+= rawArrayScan(raw) }
    sqlite3_close_v2(raw)
    precondition(checksum == rawChecksum && decodedChecksum == rawChecksum && cursorChecksum == rawChecksum && rawArrayChecksum == rawChecksum)
    print("\(repeats) scans of \(count) rows: DBCrypt cursor \(milliseconds(time / Double(repeats))), Decodable \(milliseconds(decodableTime / Double(repeats))), "
          + "Decodable cursor \(milliseconds(decodedCursorTime / Double(repeats))), raw C \(milliseconds(rawTime / Double(repeats))) each")
}

/// W1 alone, DBCrypt's `execute(values:)` then the raw C API, for a profiler.
func runInsertProfile(rows count: Int) throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let rows = BenchmarkRows(count: count)
    let db = try Database(path: dir.appendingPathComponent("api.db").path)
    try db.execute("PRAGMA synchronous = OFF")
    try db.execute(createTableSQL)
    trimAllocator()
    let api = try withExtendedLifetime(rows) { try cpuSeconds { try dbcryptInsert(db, rows) } }
    let raw = try rawConnection(dir.appendingPathComponent("raw.db").path, .plaintext)
    sqlite3_exec(raw, "PRAGMA synchronous = OFF; " + createTableSQL, nil, nil, nil)
    trimAllocator()
    let rawTime = withExtendedLifetime(rows) { cpuSeconds { rawInsert(raw, rows) } }
    sqlite3_close_v2(raw)
    print("insert of \(count) rows: DBCrypt execute(values:) \(milliseconds(api)), raw C \(milliseconds(rawTime))")
}
