import CSQLCipher
import DBCrypt
import Foundation

/// W1's rows as a record: the same 8 columns, saved and fetched through
/// the `Record` protocol (issue #16).
struct ItemRecord: Record {
    static let databaseTableName = "item"
    var a: Int64, b: Int64, c: Int64
    var d: Double, e: Double
    var f: String, g: String, h: String
}

/// Records against the hand-written API on the same rows and file:
/// `insert` of 100,000 records against `execute(values:)`, each in one
/// transaction, and `Record.fetchAll` against the raw C scan, the raw C
/// scan into an array, and `fetchAll(Item.self, sql)`; then
/// `Record.fetchCursor`, which like the raw scan drops each row once read;
/// a plaintext file, `synchronous = OFF`, interleaved rounds, CPU time.
func runRecordBenchmark(rounds: Int, rows count: Int) throws {
    let rows = BenchmarkRows(count: count)
    let records = (0..<count).map { i in
        ItemRecord(a: rows.integers[i].0, b: rows.integers[i].1, c: rows.integers[i].2, d: rows.reals[i].0, e: rows.reals[i].1,
                   f: rows.texts[i].0, g: rows.texts[i].1, h: rows.texts[i].2)
    }
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    var values = Samples(), recordInsert = Samples(), raw = Samples(), rawArray = Samples(), decodable = Samples(), recordFetch = Samples(), recordCursor = Samples()
    for round in 0..<rounds {
        for (name, insert) in [("values", { db in try dbcryptInsert(db, rows) }), ("records", { db in try recordsInsert(db, records) })]
            as [(String, (Database) throws -> Void)] {
            let path = dir.appendingPathComponent("\(name)-\(round).db").path
            let db = try Database(path: path)
            try db.execute("PRAGMA synchronous = OFF; " + createTableSQL)
            trimAllocator()
            let time = try cpuSeconds { try insert(db) }
            if name == "values" { values.add(time) } else { recordInsert.add(time) }
            db.close()
        }
        let path = dir.appendingPathComponent("records-\(round).db").path
        let db = try Database(path: path)
        var checksums = (0, 0, 0), cursorChecksum = 0
        trimAllocator()
        decodable.add(try cpuSeconds { checksums.0 = try dbcryptDecodableScan(db) })
        trimAllocator()
        recordFetch.add(try cpuSeconds { checksums.1 = try recordsFetch(db) })
        trimAllocator()
        recordCursor.add(try cpuSeconds { cursorChecksum = try recordsCursor(db) })
        db.close()
        let connection = try rawConnection(path, .plaintext)
        trimAllocator()
        raw.add(cpuSeconds { checksums.2 = rawScan(connection) })
        var arrayChecksum = 0
        trimAllocator()
        rawArray.add(cpuSeconds { arrayChecksum = rawArrayScan(connection) })
        sqlite3_close_v2(connection)
        precondition(checksums.0 == checksums.2 && checksums.1 == checksums.2 && cursorChecksum == checksums.2 && arrayChecksum == checksums.2,
                     "the records differ from the rows")
        for name in ["values", "records"] { try? FileManager.default.removeItem(atPath: dir.appendingPathComponent("\(name)-\(round).db").path) }
    }
    func ratio(_ a: Double, _ b: Double) -> String { String(format: "%.2fx", a / b) }
    print("Records: \(count) rows of 8 columns, \(rounds) interleaved rounds, plaintext, synchronous = OFF, CPU time (medians)")
    print("  insert   execute(values:) \(milliseconds(values.median))   Record.insert \(milliseconds(recordInsert.median))   ratio \(ratio(recordInsert.median, values.median))")
    print("  fetch    raw C            \(milliseconds(raw.median))   Record.fetchAll \(milliseconds(recordFetch.median))   ratio \(ratio(recordFetch.median, raw.median))"
          + "   (fetchAll(Item.self, sql) \(milliseconds(decodable.median)), ratio \(ratio(decodable.median, raw.median)))")
    print("  array    raw C into [Item] \(milliseconds(rawArray.median))   Record.fetchAll ratio \(ratio(recordFetch.median, rawArray.median))"
          + "   fetchAll(Item.self, sql) ratio \(ratio(decodable.median, rawArray.median))")
    print("  cursor   raw C            \(milliseconds(raw.median))   Record.fetchCursor \(milliseconds(recordCursor.median))   ratio \(ratio(recordCursor.median, raw.median))")
}

/// Every record inserted in one transaction.
@inline(never) func recordsInsert(_ db: Database, _ records: [ItemRecord]) throws {
    try db.inTransaction { db in
        for var record in records { try record.insert(db) }
    }
}

/// Every record fetched; a checksum as the raw scan's.
@inline(never) func recordsFetch(_ db: Database) throws -> Int {
    var checksum = 0
    for item in try ItemRecord.fetchAll(db) {
        checksum &+= Int(item.a &+ item.b &+ item.c) &+ Int(item.d + item.e) &+ item.f.utf8.count &+ item.g.utf8.count &+ item.h.utf8.count
    }
    return checksum
}

/// Every record read through a cursor, one at a time; a checksum as the raw scan's.
@inline(never) func recordsCursor(_ db: Database) throws -> Int {
    var checksum = 0
    let items = try ItemRecord.fetchCursor(db)
    while let item = try items.next() {
        checksum &+= Int(item.a &+ item.b &+ item.c) &+ Int(item.d + item.e) &+ item.f.utf8.count &+ item.g.utf8.count &+ item.h.utf8.count
    }
    return checksum
}
