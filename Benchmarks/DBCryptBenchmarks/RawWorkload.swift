import CSQLCipher
import Foundation

/// The rows of workloads W1 and W2: 3 integers, 2 reals, 3 texts of 20 to 40
/// characters, generated before any timing starts.
struct BenchmarkRows {
    let integers: [(Int64, Int64, Int64)]
    let reals: [(Double, Double)]
    let texts: [(String, String, String)]

    init(count: Int) {
        // A fixed-seed generator: the same rows in every process and round.
        var generator = SplitMix64(seed: 2026)
        func text(_ i: Int, _ salt: Int) -> String {
            let length = 20 + (i * 7 + salt) % 21
            return String(decoding: (0..<length).map { UInt8(97 + ($0 + i + salt) % 26) }, as: UTF8.self)
        }
        integers = (0..<count).map { (Int64($0), Int64.random(in: 0...1_000_000, using: &generator), Int64($0 % 100)) }
        reals = (0..<count).map { (Double($0) / 3, Double.random(in: 0...1, using: &generator)) }
        texts = (0..<count).map { (text($0, 1), text($0, 2), text($0, 3)) }
    }

    var count: Int { integers.count }
}

let createTableSQL = "CREATE TABLE item(a INTEGER, b INTEGER, c INTEGER, d REAL, e REAL, f TEXT, g TEXT, h TEXT)"
let insertSQL = "INSERT INTO item VALUES (?, ?, ?, ?, ?, ?, ?, ?)"

/// Inserts every row in one transaction with one prepared statement, through SQLite's C API.
func rawInsert(_ db: OpaquePointer, _ rows: BenchmarkRows) {
    var statement: OpaquePointer?
    sqlite3_prepare_v2(db, insertSQL, -1, &statement, nil)
    defer { sqlite3_finalize(statement) }
    sqlite3_exec(db, "BEGIN", nil, nil, nil)
    for i in 0..<rows.count {
        let (a, b, c) = rows.integers[i]
        let (d, e) = rows.reals[i]
        let (f, g, h) = rows.texts[i]
        sqlite3_bind_int64(statement, 1, a)
        sqlite3_bind_int64(statement, 2, b)
        sqlite3_bind_int64(statement, 3, c)
        sqlite3_bind_double(statement, 4, d)
        sqlite3_bind_double(statement, 5, e)
        sqlite3_bind_text(statement, 6, f, -1, dbcrypt_transient())
        sqlite3_bind_text(statement, 7, g, -1, dbcrypt_transient())
        sqlite3_bind_text(statement, 8, h, -1, dbcrypt_transient())
        guard sqlite3_step(statement) == SQLITE_DONE else { fatalError(String(cString: sqlite3_errmsg(db))) }
        sqlite3_reset(statement)
    }
    guard sqlite3_exec(db, "COMMIT", nil, nil, nil) == SQLITE_OK else { fatalError(String(cString: sqlite3_errmsg(db))) }
}

/// Reads every column of every row into Swift values (a `String` per text),
/// through SQLite's C API. Returns a checksum so the work cannot be skipped.
func rawScan(_ db: OpaquePointer) -> Int {
    var statement: OpaquePointer?
    sqlite3_prepare_v2(db, "SELECT a, b, c, d, e, f, g, h FROM item", -1, &statement, nil)
    defer { sqlite3_finalize(statement) }
    var checksum = 0
    while sqlite3_step(statement) == SQLITE_ROW {
        let a = sqlite3_column_int64(statement, 0), b = sqlite3_column_int64(statement, 1)
        let c = sqlite3_column_int64(statement, 2)
        let d = sqlite3_column_double(statement, 3), e = sqlite3_column_double(statement, 4)
        let f = String(cString: sqlite3_column_text(statement, 5))
        let g = String(cString: sqlite3_column_text(statement, 6))
        let h = String(cString: sqlite3_column_text(statement, 7))
        checksum &+= Int(a &+ b &+ c) &+ Int(d + e) &+ f.utf8.count &+ g.utf8.count &+ h.utf8.count
    }
    return checksum
}

/// A small deterministic random number generator (SplitMix64).
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
