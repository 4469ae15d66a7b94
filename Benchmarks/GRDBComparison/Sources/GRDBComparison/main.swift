// W5: GRDB 7.10.0 against the raw C API, both on the system's plain SQLite,
// running W1 (insert) and W2 (scan) exactly as DBCryptBenchmarks does.
//
//   swift run -c release --package-path Benchmarks/GRDBComparison GRDBComparison [--rounds N] [--rows N]
import Foundation
import GRDB
import GRDBSQLite

let arguments = CommandLine.arguments
func option(_ name: String, default value: Int) -> Int {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let n = Int(arguments[index + 1]) else {
        return value
    }
    return n
}
let rounds = option("--rounds", default: 5), count = option("--rows", default: 100_000)

struct Item: Decodable, FetchableRecord {
    var a: Int64, b: Int64, c: Int64
    var d: Double, e: Double
    var f: String, g: String, h: String
}

func rawOpen(_ path: String) -> OpaquePointer {
    var db: OpaquePointer?
    sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
    sqlite3_exec(db, "PRAGMA synchronous = OFF", nil, nil, nil)
    return db!
}

let rows = BenchmarkRows(count: count)
var rawInsertTime = Samples(), grdbInsert = Samples(), rawScanTime = Samples(), grdbCursor = Samples(), grdbDecodable = Samples()
for _ in 0..<rounds {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("grdb-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }

    let rawPath = dir.appendingPathComponent("raw.db").path
    var db = rawOpen(rawPath)
    sqlite3_exec(db, createTableSQL, nil, nil, nil)
    rawInsertTime.add(withExtendedLifetime(rows) { cpuSeconds { rawInsert(db, rows) } })
    sqlite3_close_v2(db)
    db = rawOpen(rawPath)
    var checksum = 0
    rawScanTime.add(cpuSeconds { checksum = rawScan(db) })
    sqlite3_close_v2(db)

    let path = dir.appendingPathComponent("grdb.db").path
    var queue = try DatabaseQueue(path: path)
    try queue.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA synchronous = OFF")
        try db.execute(sql: createTableSQL)
    }
    grdbInsert.add(try withExtendedLifetime(rows) {
        try cpuSeconds {
            try queue.inTransaction { db in
                let insert = try db.makeStatement(sql: insertSQL)
                for i in 0..<rows.count {
                    let (a, b, c) = rows.integers[i]
                    let (d, e) = rows.reals[i]
                    let (f, g, h) = rows.texts[i]
                    try insert.execute(arguments: [a, b, c, d, e, f, g, h])
                }
                return .commit
            }
        }
    })
    try queue.close()
    queue = try DatabaseQueue(path: path)
    var grdbChecksum = 0
    grdbCursor.add(try cpuSeconds {
        try queue.read { db in
            let cursor = try Row.fetchCursor(db, sql: "SELECT a, b, c, d, e, f, g, h FROM item")
            while let row = try cursor.next() {
                let a: Int64 = row[0], b: Int64 = row[1], c: Int64 = row[2]
                let d: Double = row[3], e: Double = row[4]
                let f: String = row[5], g: String = row[6], h: String = row[7]
                grdbChecksum &+= Int(a &+ b &+ c) &+ Int(d + e) &+ f.utf8.count &+ g.utf8.count &+ h.utf8.count
            }
        }
    })
    try queue.close()
    queue = try DatabaseQueue(path: path)
    var decodedChecksum = 0
    grdbDecodable.add(try cpuSeconds {
        for item in try queue.read({ try Item.fetchAll($0, sql: "SELECT a, b, c, d, e, f, g, h FROM item") }) {
            decodedChecksum &+= Int(item.a &+ item.b &+ item.c) &+ Int(item.d + item.e) &+ item.f.utf8.count &+ item.g.utf8.count &+ item.h.utf8.count
        }
    })
    try queue.close()
    precondition(checksum == grdbChecksum && checksum == decodedChecksum, "the scans disagree")
}
print("W5 GRDB 7.10.0 on the system SQLite \(String(cString: sqlite3_libversion())): \(count) rows, \(rounds) interleaved rounds, synchronous = OFF, CPU time")
print("    W1 insert   raw C \(milliseconds(rawInsertTime.median))   GRDB    \(milliseconds(grdbInsert.median))   ratio \(ratio(grdbInsert.median, rawInsertTime.median))")
print("    W2 scan     raw C \(milliseconds(rawScanTime.median))   cursor  \(milliseconds(grdbCursor.median))   ratio \(ratio(grdbCursor.median, rawScanTime.median))"
      + "   Decodable \(milliseconds(grdbDecodable.median))   ratio \(ratio(grdbDecodable.median, rawScanTime.median))")
