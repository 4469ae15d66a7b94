import CCipherProvider
import CSQLCipher
import DBCrypt
import Foundation

/// What one child process measures.
enum ProviderConfiguration: String, CaseIterable {
    /// No key: the cost of SQLite alone.
    case plaintext
    /// SQLCipher 3.4.1's own OpenSSL provider, SQLCipher 3 format, 1 KiB pages.
    case stockSQLCipher3 = "stock-sqlcipher3"
    /// DBCrypt's provider, SQLCipher 3 format, 1 KiB pages.
    case dbcryptSQLCipher3 = "dbcrypt-sqlcipher3"
    /// DBCrypt's provider, SQLCipher 3 format (SHA-1) with 4 KiB pages.
    case dbcryptSQLCipher3Pages4K = "dbcrypt-sqlcipher3-4k"
    /// DBCrypt's provider, SQLCipher 4 format (SHA-512, 4 KiB pages).
    case dbcryptSQLCipher4 = "dbcrypt-sqlcipher4"
    /// SQLCipher 4.19 from PyPI's sqlcipher3 wheel (see ``WheelSQLCipher``), no key.
    case wheelPlaintext = "sqlcipher-4.19-plaintext"
    /// SQLCipher 4.19 from the wheel, its SQLCipher 4 defaults.
    case wheelSQLCipher4 = "sqlcipher-4.19"

    var usesWheel: Bool { self == .wheelPlaintext || self == .wheelSQLCipher4 }
}

/// A raw 32-byte key: key derivation is not what is measured here.
private let rawKey = "x'" + String(repeating: "3a5f", count: 16) + "'"

/// Opens `path` keyed as `config` says, through the raw C API, and reads the schema.
private func open(_ path: String, _ config: ProviderConfiguration) -> OpaquePointer {
    var db: OpaquePointer?
    sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
    guard let db else { fatalError("cannot open \(path)") }
    if config != .plaintext {
        if config != .stockSQLCipher3 {
            dbcrypt_provider_select_mode(Int32(config == .dbcryptSQLCipher4 ? DBCRYPT_MODE_SHA512 : DBCRYPT_MODE_SHA1))
        }
        sqlite3_key_v2(db, "main", rawKey, Int32(rawKey.utf8.count))
        dbcrypt_provider_select_mode(Int32(DBCRYPT_MODE_DEFAULT))
        let pageSize = [.dbcryptSQLCipher3Pages4K, .dbcryptSQLCipher4].contains(config) ? 4096 : 1024
        sqlite3_exec(db, "PRAGMA cipher_page_size = \(pageSize)", nil, nil, nil)
    }
    guard sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nil, nil, nil) == SQLITE_OK else {
        fatalError("keying failed: \(String(cString: sqlite3_errmsg(db)))")
    }
    return db
}

/// Inserts and scans `rows` rows under `config`, in this process. The stock
/// configuration never touches DBCrypt, so its provider is never installed.
func measure(_ config: ProviderConfiguration, rows count: Int) throws -> (insert: Double, scan: Double) {
    if config.usesWheel { return try measureWheel(keyed: config == .wheelSQLCipher4, rows: count) }
    if config != .stockSQLCipher3 && config != .plaintext {
        let info = try CipherInfo.linked()
        guard info.usesDBCryptProvider else { fatalError("the linked SQLCipher \(info.cipherVersion) does not use DBCrypt's provider") }
    }
    let rows = BenchmarkRows(count: count)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dbcrypt-bench-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("bench.db").path

    var db = open(path, config)
    // The disk is not what is compared: no syncs, and CPU time only.
    sqlite3_exec(db, "PRAGMA synchronous = OFF", nil, nil, nil)
    sqlite3_exec(db, createTableSQL, nil, nil, nil)
    let insert = withExtendedLifetime(rows) { cpuSeconds { rawInsert(db, rows) } }
    sqlite3_close_v2(db)

    // A fresh connection: every page is read from the file and decrypted.
    db = open(path, config)
    var checksum = 0
    let scan = cpuSeconds { checksum = rawScan(db) }
    sqlite3_close_v2(db)
    precondition(checksum != 0)
    return (insert, scan)
}

/// As `measure`, on SQLCipher 4.19 from the wheel.
private func measureWheel(keyed: Bool, rows count: Int) throws -> (insert: Double, scan: Double) {
    guard let module = WheelSQLCipher.modulePath() else { fatalError("no sqlcipher3 wheel: run scripts/interop-venv") }
    let library = WheelSQLCipher(modulePath: module)
    let rows = BenchmarkRows(count: count)
    let directory = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("bench.db").path
    var db = library.connect(path, key: keyed ? rawKey : nil)
    library.check(db, library.exec(db, "PRAGMA synchronous = OFF", nil, nil, nil))
    library.check(db, library.exec(db, createTableSQL, nil, nil, nil))
    let insert = withExtendedLifetime(rows) { cpuSeconds { library.insert(db, rows) } }
    _ = library.close(db)
    db = library.connect(path, key: keyed ? rawKey : nil)
    var checksum = 0
    let scan = cpuSeconds { checksum = library.scan(db) }
    _ = library.close(db)
    precondition(checksum != 0)
    if keyed, let header = FileHandle(forReadingAtPath: path)?.readData(ofLength: 16) {
        precondition(header != Data("SQLite format 3\0".utf8), "the wheel wrote a plaintext file")
    }
    return (insert, scan)
}

/// Runs every configuration in its own child process, interleaved, for
/// `rounds` rounds, and prints medians and the ratios issue #4 asks for.
func runProviderBenchmark(rounds: Int, rows: Int) throws {
    print("Crypto provider: \(rows) rows of 8 columns, \(rounds) interleaved rounds, raw C API, one child process per run,")
    print("CPU time of the working thread, synchronous = OFF")
    // SQLCipher 4.19 when the interop venv has the wheel.
    let hasWheel = WheelSQLCipher.modulePath() != nil
    if !hasWheel { print("(no sqlcipher3 wheel in .build/interop-venv: scripts/interop-venv adds SQLCipher 4.19)") }
    let configurations = ProviderConfiguration.allCases.filter { hasWheel || !$0.usesWheel }
    var inserts: [ProviderConfiguration: Samples] = [:]
    var scans: [ProviderConfiguration: Samples] = [:]
    for _ in 0..<rounds {
        for config in configurations {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            child.arguments = ["measure", config.rawValue, String(rows)]
            let output = Pipe()
            child.standardOutput = output
            try child.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            child.waitUntilExit()
            let numbers = text.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            guard child.terminationStatus == 0, numbers.count == 2 else { fatalError("\(config.rawValue) failed: \(text)") }
            inserts[config, default: Samples()].add(numbers[0])
            scans[config, default: Samples()].add(numbers[1])
        }
    }
    print("")
    print("configuration              insert median (min..max)               scan median (min..max)")
    for config in configurations {
        let i = inserts[config]!, s = scans[config]!
        print(config.rawValue.padding(toLength: 26, withPad: " ", startingAt: 0)
              + "\(milliseconds(i.median)) (\(milliseconds(i.min))..\(milliseconds(i.max)))   "
              + "\(milliseconds(s.median)) (\(milliseconds(s.min))..\(milliseconds(s.max)))")
    }
    func line(_ label: String, _ a: ProviderConfiguration, _ b: ProviderConfiguration) {
        print(label.padding(toLength: 58, withPad: " ", startingAt: 0)
              + "insert \(ratio(inserts[a]!.median, inserts[b]!.median))   scan \(ratio(scans[a]!.median, scans[b]!.median))")
    }
    print("")
    line("DBCrypt provider / stock provider (SQLCipher 3, 1 KiB)", .dbcryptSQLCipher3, .stockSQLCipher3)
    line("SQLCipher 4 / SQLCipher 3 (both DBCrypt provider, 1 KiB)", .dbcryptSQLCipher4, .dbcryptSQLCipher3)
    line("SQLCipher 4 / SQLCipher 3 at 4 KiB pages", .dbcryptSQLCipher4, .dbcryptSQLCipher3Pages4K)
    line("SQLCipher 4 (DBCrypt) / stock SQLCipher 3", .dbcryptSQLCipher4, .stockSQLCipher3)
    line("stock SQLCipher 3 / plaintext", .stockSQLCipher3, .plaintext)
    line("SQLCipher 4 (DBCrypt) / plaintext", .dbcryptSQLCipher4, .plaintext)
    guard configurations.contains(.wheelSQLCipher4) else { return }
    line("SQLCipher 4.19 (wheel) / its plaintext", .wheelSQLCipher4, .wheelPlaintext)
    // Issue #15 goal 2: DBCrypt's encrypted/plaintext ratio against 4.19's.
    func quotient(_ samples: [ProviderConfiguration: Samples]) -> String {
        ratio(samples[.dbcryptSQLCipher4]!.median / samples[.plaintext]!.median,
              samples[.wheelSQLCipher4]!.median / samples[.wheelPlaintext]!.median)
    }
    print("DBCrypt's ratio / 4.19's ratio (goal <= 0.85x)".padding(toLength: 58, withPad: " ", startingAt: 0)
          + "insert \(quotient(inserts))   scan \(quotient(scans))")
}
