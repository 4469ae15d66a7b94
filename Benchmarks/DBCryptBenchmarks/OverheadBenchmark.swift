import CPrimitives
import CSQLCipher
import DBCrypt
import Foundation

/// Issue #15, goals 1 and 6: what encryption adds to W1 (insert) and W2
/// (scan) through DBCrypt's API in the SQLCipher 4 settings, against the
/// crypto floor measured in the same run, for several page sizes and page
/// cache sizes.
///
/// The floor is one AES-256-CBC pass and one HMAC-SHA512 for each page
/// SQLite wrote (insert) or read (scan), counted by SQLite itself
/// (`SQLITE_DBSTATUS_CACHE_WRITE`, `SQLITE_DBSTATUS_CACHE_MISS` of the
/// encrypted run), timed through CPrimitives on OpenSSL: the primitives
/// DBCrypt's provider calls, with nothing else around them.
func runOverheadBenchmark(rounds: Int, rows count: Int) throws {
    _ = try CipherInfo.linked()
    let rows = BenchmarkRows(count: count)
    print("Encryption overhead: W1 insert / W2 scan, \(count) rows of 8 columns, DBCrypt's API, SQLCipher 4 (raw key),")
    print("\(rounds) interleaved rounds, synchronous = OFF, CPU time; floor = AES-256-CBC + HMAC-SHA512 per page written or read")
    let settings: [(pageSize: Int, cacheKiB: Int)] = [(4096, 2000), (4096, 8192), (4096, 65536), (8192, 2000), (16384, 2000)]
    // Per setting: plaintext and encrypted times, the floor, and overhead / floor, each round.
    var measured = [[String: Samples]](repeating: [:], count: settings.count)
    var pages = [(written: Int, read: Int)](repeating: (0, 0), count: settings.count)
    for _ in 0..<rounds {
        for (index, setting) in settings.enumerated() {
            let plain = try overheadRun(rows, encrypted: false, pageSize: setting.pageSize, cacheKiB: setting.cacheKiB)
            let keyed = try overheadRun(rows, encrypted: true, pageSize: setting.pageSize, cacheKiB: setting.cacheKiB)
            let writeFloor = try cryptoFloor(pages: keyed.pagesWritten, pageSize: setting.pageSize, encrypt: true)
            let readFloor = try cryptoFloor(pages: keyed.pagesRead, pageSize: setting.pageSize, encrypt: false)
            pages[index] = (keyed.pagesWritten, keyed.pagesRead)
            for (name, value) in [
                ("insert plain", plain.insert), ("insert keyed", keyed.insert), ("insert floor", writeFloor),
                ("insert ratio", (keyed.insert - plain.insert) / writeFloor),
                ("scan plain", plain.scan), ("scan keyed", keyed.scan), ("scan floor", readFloor),
                ("scan ratio", (keyed.scan - plain.scan) / readFloor),
            ] { measured[index][name, default: Samples()].add(value) }
        }
    }
    for (index, setting) in settings.enumerated() {
        let cache = setting.cacheKiB == 2000 ? "2 MB (SQLite's default)" : "\(setting.cacheKiB / 1024) MiB"
        print("  \(setting.pageSize / 1024) KiB pages, page cache \(cache)")
        for (label, name, count) in [("W1 insert", "insert", pages[index].written), ("W2 scan  ", "scan", pages[index].read)] {
            let m = measured[index]
            let plain = m["\(name) plain"]!.median, keyed = m["\(name) keyed"]!.median
            print("    \(label)  plaintext \(milliseconds(plain))  encrypted \(milliseconds(keyed))  (\(ratio(keyed, plain)))"
                  + "  floor \(milliseconds(m["\(name) floor"]!.median)) for \(count) pages"
                  + String(format: "  overhead / floor %.2fx (rounds %.2f-%.2f)", m["\(name) ratio"]!.median, m["\(name) ratio"]!.min, m["\(name) ratio"]!.max))
        }
    }
}

/// For callgrind (`scripts/profile`): one W1 insert and W2 scan, plaintext
/// or encrypted (SQLCipher 4 defaults), or the floor of the pages the
/// encrypted run wrote and read.
func runOverheadProfile(_ which: String, rows count: Int) throws {
    _ = try CipherInfo.linked()
    let rows = BenchmarkRows(count: count)
    switch which {
    case "plaintext", "encrypted":
        let run = try overheadRun(rows, encrypted: which == "encrypted", pageSize: 4096, cacheKiB: 2000)
        print("\(which): \(run.pagesWritten) pages written, \(run.pagesRead) read")
    default:
        let run = try overheadRun(rows, encrypted: true, pageSize: 4096, cacheKiB: 2000)
        _ = try cryptoFloor(pages: run.pagesWritten, pageSize: 4096, encrypt: true)
        _ = try cryptoFloor(pages: run.pagesRead, pageSize: 4096, encrypt: false)
    }
}

/// One insert and one scan on a new file.
private struct OverheadRun {
    var insert: Double, scan: Double
    var pagesWritten: Int, pagesRead: Int
}

@inline(never) private func overheadRun(_ rows: BenchmarkRows, encrypted: Bool, pageSize: Int, cacheKiB: Int) throws -> OverheadRun {
    let directory = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("overhead.db").path
    let key = encrypted ? try DatabaseKey(rawKey: [UInt8](repeating: 0x5A, count: 32)) : nil
    var options = Database.Options()
    options.cipher = CipherSettings(.sqlcipher4, pageSize: pageSize)
    func open() throws -> Database {
        let db = try Database(path: path, key: key, options: options)
        try db.execute("PRAGMA cache_size = -\(cacheKiB)")
        return db
    }
    var db = try open()
    if !encrypted { try db.execute("PRAGMA page_size = \(pageSize)") }
    try db.execute("PRAGMA synchronous = OFF")
    try db.execute(createTableSQL)
    let insert = try withExtendedLifetime(rows) { try cpuSeconds { try dbcryptInsert(db, rows) } }
    let written = try pagerCount(db, SQLITE_DBSTATUS_CACHE_WRITE)
    db.close()
    // A fresh connection: every page is read from the file (and decrypted).
    db = try open()
    var checksum = 0
    let scan = try cpuSeconds { checksum = try dbcryptCursorScan(db) }
    let read = try pagerCount(db, SQLITE_DBSTATUS_CACHE_MISS)
    db.close()
    precondition(checksum != 0)
    return OverheadRun(insert: insert, scan: scan, pagesWritten: written, pagesRead: read)
}

/// A pager count of `db` since it opened.
private func pagerCount(_ db: Database, _ counter: Int32) throws -> Int {
    try db.withSQLiteHandle { handle in
        var current: Int32 = 0, highest: Int32 = 0
        sqlite3_db_status(handle, counter, &current, &highest, 0)
        return Int(current)
    }
}

/// CPU seconds of what SQLCipher 4 must do to `pages` pages at the least:
/// AES-256-CBC over the page less its reserve (16-byte IV, 64-byte HMAC),
/// then HMAC-SHA512 over that and the IV and the page number.
@inline(never) private func cryptoFloor(pages: Int, pageSize: Int, encrypt: Bool) throws -> Double {
    let key = [UInt8](repeating: 0x5A, count: 32), hmacKey = [UInt8](repeating: 0xA5, count: 32)
    guard let cipher = dbcrypt_cbc_key_new(key), let hmac = dbcrypt_hmac_key_new(Int32(DBCRYPT_SHA512.rawValue), hmacKey, hmacKey.count) else {
        throw DatabaseError.invalidArguments(reason: "OpenSSL made no page keys", sql: nil)
    }
    defer {
        dbcrypt_cbc_key_free(cipher)
        dbcrypt_hmac_key_free(hmac)
    }
    let content = pageSize - 80
    var page = [UInt8](repeating: 0x33, count: pageSize)
    var mac = [UInt8](repeating: 0, count: 64)
    let iv = [UInt8](repeating: 7, count: 16)
    return cpuSeconds {
        page.withUnsafeMutableBufferPointer { page in
            for number in 0..<pages {
                var pageNumber = UInt32(number + 1).littleEndian
                withUnsafeBytes(of: &pageNumber) { number in
                    let bytes = number.bindMemory(to: UInt8.self).baseAddress!
                    _ = dbcrypt_cbc(cipher, encrypt ? 1 : 0, iv, page.baseAddress!, page.baseAddress!, content)
                    dbcrypt_hmac(hmac, page.baseAddress!, content + 16, bytes, 4, &mac)
                }
            }
        }
    }
}
