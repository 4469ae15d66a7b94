// Shared by DBCryptBenchmarks (SQLCipher) and GRDBComparison (the system's
// SQLite): the same raw C loops on whichever SQLite the package links.
#if canImport(CSQLCipher)
import CSQLCipher
#else
import GRDBSQLite
#endif
import Foundation


/// Inserts every row in one transaction with one prepared statement, through SQLite's C API.
func rawInsert(_ db: OpaquePointer, _ rows: BenchmarkRows) {
    let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)   // SQLITE_TRANSIENT
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
        sqlite3_bind_text(statement, 6, f, -1, transient)
        sqlite3_bind_text(statement, 7, g, -1, transient)
        sqlite3_bind_text(statement, 8, h, -1, transient)
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
