// A child process for the tests that must kill a routine mid-way or limit
// its file size. Keys come from the environment, never from arguments.
//
//   DBCryptTestHelper migrate PATH [--fsize-limit BYTES]
//       DBCRYPT_TEST_KEY: the new key
//   DBCryptTestHelper change-key PATH [--fsize-limit BYTES]
//       DBCRYPT_TEST_KEY: the current key, DBCRYPT_TEST_NEW_KEY: the new one
//   DBCryptTestHelper rekey-connection PATH
//       as change-key, through Database.changeKey(to:) (sqlite3_rekey, one transaction)
//   DBCryptTestHelper wrong-reserve PATH
//       DBCRYPT_TEST_KEY: the key of PATH, a SQLCipher 3 file. Keys a raw
//       connection as SQLCipher 3 (48 reserved bytes), switches its HMAC to
//       SHA-512 without recomputing the reserve, and reads: prints what
//       happened instead of writing past SQLCipher's page buffers.
//   DBCryptTestHelper rotate-store PATH
//       DBCRYPT_TEST_KEY: the database's key, DBCRYPT_TEST_STORE_KEY: the
//       passphrase of its sealed store "default", whose data key it rotates
//   DBCryptTestHelper write-exclusively PATH
//       DBCRYPT_TEST_KEY: the key. Opens a pool exclusive to this process
//       and commits rows until it is killed, printing "committed N" after
//       each commit and reading now and then
//   DBCryptTestHelper temp-storage PATH [--temp-store-file]
//       DBCRYPT_TEST_KEY: the key. Makes an encrypted database of rows
//       holding "row-secret-N", then sorts them with a cache too small to
//       hold them, fills a temporary table and indexes it; with
//       --temp-store-file, first puts temporary storage back on disk
//       (the control: what a raw handle with SQLite's default may do)
//   DBCryptTestHelper backup PATH COPY
//       DBCRYPT_TEST_KEY: the key. Opens a pool on PATH and backs it up to COPY
//   DBCryptTestHelper continuous-backup-app PATH DESTINATION
//       DBCRYPT_TEST_KEY: the key. Opens a pool on PATH with a continuous
//       backup to DESTINATION (every 20 ms, a snapshot every 400 ms, or
//       DBCRYPT_TEST_SNAPSHOT_MS) and commits row N (and its tally), without
//       pause or DBCRYPT_TEST_COMMITS_PER_SECOND, until it is killed, printing
//       "committed N" after each commit, "checkpointed" after every 40th
//       (a passive checkpoint), "shipped C" for each commit shipped, and
//       "failed ERROR" for each round of the backup that failed.
//       DESTINATION is a directory, or s3://BUCKET/PREFIX: then the
//       storage is S3BackupStorage.fromEnvironment (AWS_ENDPOINT_URL,
//       AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), each request
//       sent DBCRYPT_TEST_S3_ATTEMPTS times at most when set (its
//       maximumAttempts; else the default)
//   DBCryptTestHelper key-store-load secret-service|kernel|credentials SERVICE/ACCOUNT
//       loads the key: prints "found" and the key's kind, or the KeyStoreError's case
//   DBCryptTestHelper key-store-race secret-service|kernel SERVICE/ACCOUNT DBPATH
//       waits for its standard input to end, DatabaseKey.loadOrCreate, then opens DBPATH with that key (making it
//       when missing) and adds a row naming this process
//
// Prints "done" and exits 0 on success; prints the error and exits 1 on failure.
import CSQLCipher
import DBCrypt
import DBCryptS3
import DBCryptSeal
import Foundation

func key(_ name: String) -> DatabaseKey {
    guard let text = ProcessInfo.processInfo.environment[name] else {
        FileHandle.standardError.write(Data("\(name) is not set\n".utf8))
        exit(2)
    }
    return .passphrase(text)
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: DBCryptTestHelper migrate|change-key|rekey-connection|wrong-reserve|rotate-store|write-exclusively PATH [--fsize-limit BYTES]\n".utf8))
    exit(2)
}
if let flag = arguments.firstIndex(of: "--fsize-limit"), flag + 1 < arguments.count, let limit = rlim_t(arguments[flag + 1]) {
    // Writing past the limit then fails with EFBIG instead of killing the process.
    signal(SIGXFSZ, SIG_IGN)
    var rlimit = rlimit(rlim_cur: limit, rlim_max: limit)
    setrlimit(Int32(RLIMIT_FSIZE.rawValue), &rlimit)
}

do {
    switch arguments[1] {
    case "migrate":
        try DatabaseEncryption.migrateInPlace(arguments[2], key: key("DBCRYPT_TEST_KEY"))
    case "rekey-connection":
        let db = try Database(path: arguments[2], key: key("DBCRYPT_TEST_KEY"))
        try db.changeKey(to: key("DBCRYPT_TEST_NEW_KEY"))
        db.close()
    case "wrong-reserve":
        try wrongReserve(arguments[2], key: ProcessInfo.processInfo.environment["DBCRYPT_TEST_KEY"] ?? "")
    case "rotate-store":
        let queue = try DatabaseQueue(path: arguments[2], key: key("DBCRYPT_TEST_KEY"))
        let passphrase = ProcessInfo.processInfo.environment["DBCRYPT_TEST_STORE_KEY"] ?? ""
        try SealedStore(queue, credential: .passphrase(passphrase), create: false).rotateDataKey()
        try queue.close()
    case "write-exclusively":
        try writeExclusively(arguments[2], key: key("DBCRYPT_TEST_KEY"))
    case "temp-storage":
        try temporaryStorage(arguments[2], key: key("DBCRYPT_TEST_KEY"), onDisk: arguments.contains("--temp-store-file"))
    case "key-store-load":
        try keyStoreLoad(store: arguments[2], item: arguments[3])
    case "key-store-race":
        try keyStoreRace(store: arguments[2], item: arguments[3], database: arguments[4])
    case "backup":
        let pool = try DatabasePool(path: arguments[2], key: key("DBCRYPT_TEST_KEY"))
        try pool.backup(to: arguments[3])
        try pool.close()
    case "continuous-backup-app":
        try continuousBackupApp(arguments[2], destination: arguments[3], key: key("DBCRYPT_TEST_KEY"))
    case "change-key":
        try DatabaseEncryption.changeKey(arguments[2], from: key("DBCRYPT_TEST_KEY"), to: key("DBCRYPT_TEST_NEW_KEY"))
    default:
        FileHandle.standardError.write(Data("unknown command \(arguments[1])\n".utf8))
        exit(2)
    }
    print("done")
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}

/// See `wrong-reserve` above.
func wrongReserve(_ path: String, key: String) throws {
    _ = try CipherInfo.linked()   // installs DBCrypt's provider
    var db: OpaquePointer?
    guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else { exit(3) }
    defer { sqlite3_close_v2(db) }
    _ = sqlite3_key_v2(db, "main", key, Int32(key.utf8.count))
    _ = sqlite3_exec(db, "PRAGMA cipher = 'aes-256-cbc-hmac-sha512'", nil, nil, nil)
    for sql in ["SELECT count(*) FROM sqlite_master", "SELECT count(*) FROM t", "INSERT INTO t VALUES (1)"] {
        let code = sqlite3_exec(db, sql, nil, nil, nil)
        print("\(sql): \(code == SQLITE_OK ? "ok" : "refused (\(code))")")
    }
}

/// See `write-exclusively` above.
func writeExclusively(_ path: String, key: DatabaseKey) throws -> Never {
    var options = Database.Options()
    options.exclusiveToThisProcess = true
    let pool = try DatabasePool(path: path, key: key, options: options)
    try pool.write { db in try db.execute("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, value BLOB)") }
    var count = 0
    while true {
        try pool.write { db in try db.execute("INSERT INTO t(value) VALUES (randomblob(3000))") }
        count += 1
        FileHandle.standardOutput.write(Data("committed \(count)\n".utf8))
        if count % 100 == 0 {
            let rows = try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM t") }
            guard rows == count else { throw DatabaseError.damaged(path: path, reason: "\(rows ?? 0) rows after \(count) commits") }
        }
    }
}

/// See `continuous-backup-app` above.
func continuousBackupApp(_ path: String, destination: String, key: DatabaseKey) throws -> Never {
    @Sendable func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    var backupOptions = ContinuousBackup.Options()
    backupOptions.interval = .milliseconds(20)
    let environment = ProcessInfo.processInfo.environment
    backupOptions.snapshotInterval = .milliseconds(environment["DBCRYPT_TEST_SNAPSHOT_MS"].flatMap { Int64($0) } ?? 400)
    backupOptions.retention = .seconds(3600)
    backupOptions.shipped = { say("shipped \($0.commit)") }
    backupOptions.failed = { say("failed \($0)") }
    let storage: any BackupStorage
    if destination.hasPrefix("s3://") {
        var s3Options = S3BackupStorage.Options()
        if let attempts = environment["DBCRYPT_TEST_S3_ATTEMPTS"].flatMap({ Int($0) }) { s3Options.maximumAttempts = attempts }
        storage = try S3BackupStorage.fromEnvironment(destination, options: s3Options)
    } else {
        storage = try DirectoryBackupStorage(path: destination)
    }
    var options = Database.Options()
    options.continuousBackup = .init(storage: storage, options: backupOptions)
    let pool = try DatabasePool(path: path, key: key, options: options)
    try pool.write { db in
        try db.execute("""
            CREATE TABLE IF NOT EXISTS item(id INTEGER PRIMARY KEY, body TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS tally(n INTEGER NOT NULL);
            INSERT INTO tally SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM tally);
            """)
    }
    var count = try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM item") } ?? 0
    let pace = environment["DBCRYPT_TEST_COMMITS_PER_SECOND"].flatMap { Double($0) }
    let started = Date(), first = count
    while true {
        if let pace {
            let due = Double(count - first) / pace - Date().timeIntervalSince(started)
            if due > 0 { usleep(useconds_t(due * 1_000_000)) }  // a pace the test sets
        }
        count += 1
        try pool.write { db in
            try db.execute("INSERT INTO item(id, body) VALUES (?, 'row ' || ? || hex(zeroblob(? % 300)))", [count, count, count])
            try db.execute("UPDATE tally SET n = n + 1")
        }
        say("committed \(count)")
        if count % 40 == 0 {
            _ = try pool.checkpoint(.passive)
            say("checkpointed")
        }
    }
}

/// See `temp-storage` above.
func temporaryStorage(_ path: String, key: DatabaseKey, onDisk: Bool) throws {
    let db = try Database(path: path, key: key)
    if onDisk { try db.execute("PRAGMA temp_store = FILE") }
    try db.execute("""
        PRAGMA cache_size = 8;
        CREATE TABLE secret(id INTEGER PRIMARY KEY, body TEXT);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
        INSERT INTO secret(body) SELECT 'row-secret-' || i || '-' || hex(randomblob(40)) FROM n;
        """)
    // A sort bigger than the cache spills to temporary storage.
    let sorted = try db.fetchAll(String.self, "SELECT body FROM secret ORDER BY substr(body, 20) DESC")
    guard sorted.count == 20000 else { throw DatabaseError.damaged(path: path, reason: "sorted \(sorted.count) rows") }
    try db.execute("""
        CREATE TEMP TABLE copy AS SELECT body FROM secret;
        CREATE INDEX temp.copy_body ON copy(body);
        """)
    db.close()
}
