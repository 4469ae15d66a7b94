import CSQLCipher
import Foundation

/// Scale (issue #15 goal 5): `dbcrypt migrate`, `decrypt` and `check` on
/// plaintext databases of each size in `gigabytes`, each in a process of
/// its own so that its peak resident memory is its own, against the bare
/// `sqlcipher_export` of the Debian `sqlcipher` shell on the same file.
/// Prints wall-clock time, throughput and peak RSS; time per GiB at each
/// size shows whether time grows linearly with size.
func runScaleBenchmark(gigabytes sizes: [Int], dbcrypt: String) throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let keyVariable = "DBCRYPT_SCALE_KEY", passphrase = "scale benchmark passphrase"
    print("Scale: dbcrypt (SQLCipher 4 format) against the Debian sqlcipher shell's bare export (its SQLCipher 3 defaults), one process each")
    print("  size      step                               time    MB/s   s/GiB   peak RSS")
    for size in sizes {
        let plain = dir.appendingPathComponent("plain-\(size).db").path
        try makePlaintextDatabase(plain, bytes: Int64(size) << 30)
        let megabytes = Double(fileBytes(plain)) / 1e6
        let encrypted = dir.appendingPathComponent("encrypted-\(size).db").path
        let bare = dir.appendingPathComponent("bare-\(size).db").path
        let decrypted = dir.appendingPathComponent("decrypted-\(size).db").path
        let script = dir.appendingPathComponent("export.sql").path
        try "ATTACH DATABASE '\(bare)' AS encrypted KEY '\(passphrase)';\nSELECT sqlcipher_export('encrypted');\nDETACH DATABASE encrypted;\n"
            .write(toFile: script, atomically: true, encoding: .utf8)
        let environment = [keyVariable: passphrase]
        let steps: [(String, [String], String?)] = [
            ("sqlcipher shell: bare export", ["/usr/bin/sqlcipher", plain], script),
            ("dbcrypt migrate -o", [dbcrypt, "migrate", plain, "-o", encrypted, "--key-env", keyVariable], nil),
            ("dbcrypt decrypt -o", [dbcrypt, "decrypt", encrypted, "-o", decrypted, "--key-env", keyVariable], nil),
            ("dbcrypt check", [dbcrypt, "check", encrypted, "--key-env", keyVariable], nil),
        ]
        for (label, command, input) in steps {
            let run = try runMeasured(command, environment: environment, input: input)
            guard run.status == 0 else {
                throw ScaleError.failed("\(label) exited \(run.status): \(run.errors)")
            }
            let column = label.padding(toLength: 30, withPad: " ", startingAt: 0)
            print(String(format: "  %2d GiB    %@ %6.1f s  %6.0f  %6.1f   %5.0f MiB", size, column, run.seconds,
                         megabytes / run.seconds, run.seconds / (megabytes / 1073.741824), run.peakMegabytes))
        }
        for path in [plain, encrypted, bare, decrypted] { unlink(path) }
    }
}

enum ScaleError: Error {
    case failed(String)
}

/// A plaintext SQLite file of at least `bytes`: rows of a short text (with
/// an index on it) and a 900-byte blob, written with no journal.
private func makePlaintextDatabase(_ path: String, bytes: Int64) throws {
    var db: OpaquePointer?
    guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
        throw ScaleError.failed("cannot create \(path)")
    }
    defer { sqlite3_close_v2(db) }
    sqlite3_exec(db, """
        PRAGMA page_size = 4096; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
        CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, data BLOB);
        CREATE INDEX item_by_name ON item(name);
        """, nil, nil, nil)
    let chunk = """
        INSERT INTO item(name, data) SELECT hex(randomblob(12)), randomblob(900)
        FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 100000) SELECT i FROM c)
        """
    while fileBytes(path) < bytes {
        guard sqlite3_exec(db, chunk, nil, nil, nil) == SQLITE_OK else {
            throw ScaleError.failed("cannot fill \(path): \(String(cString: sqlite3_errmsg(db)))")
        }
    }
}

private func fileBytes(_ path: String) -> Int64 {
    var info = stat()
    return stat(path, &info) == 0 ? Int64(info.st_size) : 0
}

/// Runs `command` to its end with `environment` added to this process's and
/// standard input from the file `input`: its exit status, wall-clock time,
/// peak resident memory (from `wait4`), and what it wrote to standard error.
private func runMeasured(_ command: [String], environment: [String: String], input: String?) throws
    -> (status: Int32, seconds: Double, peakMegabytes: Double, errors: String) {
    let errorsPath = FileManager.default.temporaryDirectory.appendingPathComponent("dbcrypt-scale-\(getpid()).err").path
    defer { unlink(errorsPath) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, input ?? "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, errorsPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    var variables = ProcessInfo.processInfo.environment
    variables.merge(environment) { $1 }
    let argv = command.map { strdup($0) } + [nil]
    let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    var pid = pid_t()
    let start = DispatchTime.now().uptimeNanoseconds
    let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, envp)
    guard spawned == 0 else { throw ScaleError.failed("cannot start \(command[0]): \(String(cString: strerror(spawned)))") }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    let errors = (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? ""
    return (exitStatus, elapsed, Double(usage.ru_maxrss) / 1024, errors)
}
