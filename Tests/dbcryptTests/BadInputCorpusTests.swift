import DBCrypt
import Foundation
import XCTest

/// Bad input for every command: missing, empty, foreign, truncated and
/// damaged files, directories and links where a database should be, wrong and
/// unreadable keys, bad option values, outputs that are the input or exist,
/// bad migration directories, bad SQL, bad usage. Every case exits with its
/// status, prints nothing on stdout and one line on stderr that says what is
/// wrong, and leaves every file in the directory byte-identical.
final class BadInputCorpusTests: XCTestCase {
    struct Case {
        let arguments: [String]
        let status: Int32
        /// A part of the one line on stderr.
        let says: String
    }

    var work: URL!

    override func setUpWithError() throws {
        work = try makeTemporaryDirectory(self)
        try makeFixture(in: work)
    }

    /// The files every case runs among, by name. (Made in place: a copy of
    /// the directory would not keep the hard link.)
    private func makeFixture(in dir: URL) throws {
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
        func write(_ name: String, _ data: Data) throws { try data.write(to: dir.appendingPathComponent(name)) }
        try makePlaintextDatabase(path("plain.db"))
        try DatabaseEncryption.encrypt(path("plain.db"), to: path("enc.db"), key: testKey)
        try DatabaseEncryption.encrypt(path("plain.db"), to: path("enc3.db"), key: testKey, cipher: .sqlcipher3)
        let plain = try contents(path("plain.db")), encrypted = try contents(path("enc.db"))
        try write("empty.db", Data())
        try write("text.txt", Data(String(repeating: "hello, this is not a database\n", count: 10).utf8))
        var seed: UInt32 = 7
        try write("random.bin", Data((0..<4096).map { _ in seed = seed &* 1_103_515_245 &+ 12345; return UInt8(truncatingIfNeeded: seed >> 16) }))
        try write("header-only.db", Data("SQLite format 3\0".utf8) + Data(count: 84))
        try write("truncated-plain.db", plain.prefix(1500))
        try write("truncated.db", encrypted.prefix(1000))
        try write("truncated2.db", encrypted.prefix(6000))
        try write("junk.db", encrypted + (try contents(path("random.bin"))))   // a page of junk appended
        try FileManager.default.createDirectory(atPath: path("dir.db"), withIntermediateDirectories: false)
        XCTAssertEqual(symlink("missing.db", path("dangling.db")), 0)
        XCTAssertEqual(symlink("loop.db", path("loop.db")), 0)
        XCTAssertEqual(symlink("enc.db", path("enc-link.db")), 0)
        try FileManager.default.copyItem(atPath: path("plain.db"), toPath: path("linked.db"))
        XCTAssertEqual(link(path("linked.db"), path("linked-too.db")), 0)
        try write("key-empty", Data())
        try write("key-malformed", Data("x'zz'".utf8))
        let migrations = ["Migrations-ok": ("0001_x.sql", "CREATE TABLE x(a);"),
                          "Migrations-broken": ("0001_x.sql", "CREATE TABLE (;"),
                          "Migrations-misnamed": ("first.sql", "CREATE TABLE x(a);")]
        for (folder, (name, sql)) in migrations {
            try FileManager.default.createDirectory(atPath: path(folder), withIntermediateDirectories: false)
            try write(folder + "/" + name, Data(sql.utf8))
        }
        try FileManager.default.createDirectory(atPath: path("Migrations-fifo"), withIntermediateDirectories: false)
        XCTAssertEqual(mkfifo(path("Migrations-fifo/0001_x.sql"), 0o644), 0)
        XCTAssertEqual(mkfifo(path("fifo"), 0o600), 0)

        // Write-ahead logs with commits not yet checkpointed: intact, with a
        // damaged first frame, and another database's log beside a file.
        try writeLoggedDatabase(path("logged.db"), key: keyText)
        try writeLoggedDatabase(path("damaged-log.db"), key: keyText)
        var log = try contents(path("damaged-log.db-wal"))
        log[32 + 24 + 100] ^= 0x01
        try write("damaged-log.db-wal", log)
        try writeLoggedDatabase(path("foreign-log.db"), key: keyText)
        try write("foreign-log.db-wal", try contents(path("logged.db-wal")))
        // A plaintext header (an iOS app's database), its salt written down.
        // Keyed with a passphrase (PASSPHRASE): a salt is what derives its key.
        try DatabaseEncryption.encrypt(path("plain.db"), to: path("header.db"), key: .passphrase(realPassphrase))
        headerSalt = try givePlaintextHeader(path("header.db"), environment: passphraseEnvironment)
    }

    /// The salt `header` printed for header.db.
    private var headerSalt = ""

    /// Every case: the databases that are not what they should be, met by
    /// every command; then keys, options, outputs, migrations and SQL.
    private var cases: [Case] {
        let key = ["--key-env", "KEY"]
        var cases: [Case] = []
        func add(_ arguments: [String], _ status: Int32, _ says: String) { cases.append(Case(arguments: arguments, status: status, says: says)) }

        // Files that are not the database they should be, for every command.
        let commands: [(name: String, arguments: (String) -> [String])] = [
            ("migrate", { ["migrate", $0] + key }),
            ("migrate -o", { ["migrate", $0, "-o", "out.db"] + key }),
            ("decrypt", { ["decrypt", $0, "-o", "out.db"] + key }),
            ("rekey", { ["rekey", $0, "--new-key-env", "OTHER"] + key }),
            ("check", { ["check", $0] + key }),
            ("check, no key", { ["check", $0] }),
            ("info", { ["info", $0] + key }),
            ("sql", { ["sql", $0, "SELECT count(*) FROM note"] + key }),
            ("shell", { ["shell", $0] + key }),
            ("schema", { ["schema", $0, "--dir", "Migrations-ok"] + key }),
            ("kv", { ["kv", $0, "get", "token", "--store-key-env", "STORE"] + key }),
            ("backup", { ["backup", $0, "-o", "out.db"] + key }),
        ]
        for (name, arguments) in commands {
            let isMigrate = name.hasPrefix("migrate")
            if name != "schema" {   // schema creates a database that does not exist
                add(arguments("missing.db"), 1, name == "sql" || name == "shell" ? "No database at missing.db: check the path, or pass --create"
                                                              : "No database at missing.db: check the path.")
                add(arguments("dangling.db"), 1, "No database at dangling.db: it is a symbolic link to missing.db, which does not exist.")
                add(arguments("empty.db"), 3, "empty.db is empty: it is not a database.")
            }
            add(arguments("dir.db"), 1, "dir.db is a directory, not a database file.")
            add(arguments("loop.db"), 1, "Cannot open loop.db: Too many levels of symbolic links.")
            for foreign in ["text.txt", "random.bin", "truncated.db"] {
                if isMigrate {
                    add(arguments(foreign), 1, "\(foreign) is not a plaintext SQLite database")
                } else if name == "check, no key" {
                    add(arguments(foreign), 1, "No key given: use --key-env or --key-file")
                } else {
                    add(arguments(foreign), 3, "The key does not open \(foreign), or it is not a database")
                }
            }
            for broken in ["header-only.db", "truncated-plain.db"] {
                if isMigrate || name == "check, no key" {
                    add(arguments(broken), 4, "\(broken) is damaged (")
                } else {
                    add(arguments(broken), 1, "The database at \(broken) is not encrypted")
                }
            }
            if isMigrate {
                add(arguments("truncated2.db"), 1, "truncated2.db is not a plaintext SQLite database")
            } else if name == "check, no key" {
                add(arguments("truncated2.db"), 1, "No key given")
            } else {
                add(arguments("truncated2.db"), 4, "truncated2.db is damaged")
            }
            if !isMigrate && name != "check, no key" {
                add(arguments("plain.db"), 1, "The database at plain.db is not encrypted: open it without a key")
            }
        }
        for command in [["check", "enc.db"], ["info", "enc.db"], ["sql", "enc.db", "SELECT 1"], ["decrypt", "enc.db", "-o", "out.db"],
                        ["rekey", "enc.db", "--new-key-env", "OTHER"], ["schema", "enc.db", "--dir", "Migrations-ok"]] {
            add(command + ["--key-env", "OTHER"], 3, "The key does not open enc.db, or it is not a database: check the key and the file.")
        }
        add(["migrate", "enc.db"] + key, 1, "enc.db is not a plaintext SQLite database (it is encrypted already")

        // Logs: a wrong key (3), a damaged frame and another database's log (4).
        let readers: [(String) -> [String]] = [
            { ["sql", $0, "SELECT count(*) FROM t"] }, { ["check", $0] }, { ["info", $0] }, { ["decrypt", $0, "-o", "out.db"] },
            { ["rekey", $0, "--new-key-env", "OTHER"] }, { ["schema", $0, "--dir", "Migrations-ok", "--status"] },
            { ["schema", $0, "--dir", "Migrations-ok"] }, { ["kv", $0, "get", "token", "--store-key-env", "STORE"] },
        ]
        for command in readers {
            add(command("logged.db") + ["--key-env", "OTHER"], 3, "The key does not open logged.db")
            let damaged = command("damaged-log.db")
            add(damaged + key, 4, damaged[0] == "check" ? "damaged-log.db is damaged" : "frame 0 is damaged (2 committed transactions")
            let foreign = command("foreign-log.db")
            add(foreign + key, 4, foreign[0] == "check" ? "foreign-log.db is damaged" : "foreign-log.db-wal does not decrypt with the key")
        }
        // Junk past the last page is damage in every command that reads the whole file.
        for command in [["decrypt", "junk.db", "-o", "out.db"], ["rekey", "junk.db", "--new-key-env", "OTHER"], ["check", "junk.db"]] {
            add(command + key, 4, command[0] == "check" ? "junk.db is damaged" : "junk.db is damaged (4096 bytes past its last page")
        }
        // A plaintext header with a wrong key, or a wrong salt, is a wrong key.
        for command in [["check", "header.db"], ["info", "header.db"], ["decrypt", "header.db", "-o", "out.db"],
                        ["recover", "header.db", "-o", "out.db"], ["header", "header.db", "--plaintext-header", "0"]] {
            add(command + ["--key-env", "OTHER", "--salt", headerSalt], 3, "header.db")
            add(command + ["--key-env", "PASSPHRASE", "--salt", String(repeating: "ab", count: 16)], 3, "header.db")
        }
        // Outputs that are not regular files, --force or not.
        for command in [["decrypt", "enc.db"], ["migrate", "plain.db"], ["recover", "enc.db"]] {
            add(command + ["-o", "fifo", "--force"] + key, 1, "Cannot open fifo: it is a FIFO (named pipe), not a regular file")
        }
        add(["sql", "fifo", "SELECT 1", "--create"], 1, "Cannot open fifo: it is a FIFO (named pipe), not a regular file")

        // Keys that cannot be read.
        for command in [["check", "enc.db"], ["migrate", "plain.db"], ["rekey", "enc.db", "--new-key-env", "OTHER"]] {
            add(command + ["--key-env", "UNSET"], 1, "The environment variable UNSET is not set: put the key in it, or use --key-file.")
            add(command + ["--key-env", "EMPTY"], 1, "The key in the environment variable EMPTY is empty.")
            add(command + ["--key-file", "missing-key"], 1, "Cannot read the key file missing-key")
            add(command + ["--key-file", "key-empty"], 1, "The key in the key file key-empty is empty.")
            add(command + ["--key-file", "dir.db"], 1, "Cannot read the key file dir.db")
            add(command + ["--key-file", "key-malformed"], 1, "The raw key in the key file key-malformed is malformed")
        }
        add(["rekey", "enc.db", "--new-key-env", "UNSET"] + key, 1, "The environment variable UNSET is not set: put the key in it, or use --new-key-file.")
        add(["rekey", "enc.db", "--new-key-env", "EMPTY"] + key, 1, "The key in the environment variable EMPTY is empty.")
        add(["rekey", "enc.db"] + key, 1, "No key given: use --new-key-env or --new-key-file")

        // Cipher settings.
        add(["migrate", "plain.db", "--page-size", "1000"] + key, 1, "the page size must be a power of two")
        add(["migrate", "plain.db", "--kdf-iter", "0"] + key, 1, "the KDF iteration count must be from 1")
        add(["rekey", "enc.db", "--new-key-env", "OTHER", "--new-page-size", "3"] + key, 1, "the page size must be a power of two")
        add(["rekey", "enc.db", "--new-key-env", "OTHER", "--format", "sqlcipher3"] + key, 1, "use --new-format sqlcipher3")

        // Outputs: the input itself, by any name; taken; nowhere to go.
        for output in ["enc.db", "./enc.db", "enc-link.db"] {
            add(["decrypt", "enc.db", "-o", output, "--force"] + key, 1, "is the input database itself")
        }
        add(["migrate", "plain.db", "-o", "plain.db", "--force"] + key, 1, "is the input database itself")
        add(["migrate", "linked.db", "-o", "linked-too.db", "--force"] + key, 1, "is the input database itself")
        add(["decrypt", "enc.db", "-o", "text.txt"] + key, 1, "text.txt already exists: choose another output, or pass --force to replace it.")
        add(["migrate", "plain.db", "-o", "enc3.db"] + key, 1, "enc3.db already exists")
        add(["decrypt", "enc.db", "-o", "nowhere/out.db"] + key, 1, "Cannot open nowhere/out.db: its directory does not exist.")
        add(["decrypt", "enc.db", "-o", "dir.db", "--force"] + key, 1, "dir.db is a directory")
        add(["decrypt", "enc.db", "-o", "dangling.db"] + key, 1, "it is a symbolic link to a file that does not exist")
        add(["migrate", "linked.db"] + key, 1, "has 1 other name(s) (hard links)")

        // Migrations and SQL.
        add(["schema", "enc.db", "--dir", "nowhere"] + key, 1, "Cannot read the migrations directory nowhere: No such file or directory.")
        add(["schema", "enc.db", "--dir", "text.txt"] + key, 1, "Cannot read the migrations directory text.txt: Not a directory.")
        add(["schema", "enc.db", "--dir", "Migrations-broken"] + key, 1, "Migration 1 (x) failed and was rolled back")
        add(["schema", "enc.db", "--dir", "Migrations-misnamed"] + key, 1, "first.sql")
        add(["schema", "enc.db", "--dir", "Migrations-fifo"] + key, 1, "0001_x.sql: it is not a regular file.")
        add(["sql", "enc.db", "SELEC 1"] + key, 1, "syntax error")
        add(["sql", "enc.db", "SELECT * FROM nowhere"] + key, 1, "no such table: nowhere")
        add(["sql", "enc.db", "INSERT INTO author(id, name) VALUES (1, 'Ada')"] + key, 1, "UNIQUE constraint failed")
        add(["sql", "enc.db", "SELEC 1; SELECT 2"] + key, 1, "syntax error")

        // The sealed store and the envelope.
        add(["kv", "enc.db", "get", "token", "--store-key-env", "STORE"] + key, 1, "enc.db has no sealed store named \"default\"")
        add(["kv", "enc.db", "set", "token", "--store-key-env", "STORE"] + key, 1, "make it with kv set --create")
        add(["kv", "enc.db", "get"] + key, 64, "Missing expected argument '<name>'")
        add(["kv", "enc.db", "list", "token"] + key, 64, "Unexpected argument 'token'")
        add(["kv", "enc.db", "get", "token", "--create"] + key, 64, "Unknown option '--create'")
        add(["kv", "enc.db", "erase", "token"] + key, 64, "erase is not a kv command (get, set, remove, list, rotate, passwd)")
        add(["envelope", "seal"], 64, "Give the key with --key-env NAME, --key-file PATH or a key store")
        add(["envelope", "open", "--key-env", "EMPTY"], 1, "The key in the environment variable EMPTY is not usable")
        add(["envelope", "open", "--key-env", "KEY"], 1, "The key in the environment variable KEY is not usable")
        add(["envelope", "open", "--key-file", "random.bin"], 1, "The key in the key file random.bin is not UTF-8 text")
        add(["envelope", "open", "--key-file", "nowhere"], 1, "Cannot read the key file nowhere")

        // Usage.
        add(["decrypt", "enc.db"] + key, 64, "Missing expected argument '--output <PATH>': see 'dbcrypt decrypt --help'.")
        add(["migrate"], 64, "see 'dbcrypt migrate --help'.")
        add(["bogus"], 64, "Unexpected argument 'bogus': see 'dbcrypt --help'.")
        add(["migrate", "plain.db", "--format", "sqlcipher5"] + key, 64, "'sqlcipher5' is invalid for '--format <FORMAT>'")
        add(["migrate", "plain.db", "--page-size", "99999999999999999999"] + key, 64, "is invalid for '--page-size <BYTES>'")
        add(["check", "enc.db", "--key-file", "key-empty"] + key, 64, "Give one of --key-env, --key-file, --key-keyring, --key-kernel-keyring and --key-credential")
        add(["rekey", "enc.db", "--new-key-env", "KEY", "--new-key-kernel-keyring", "x"] + key, 64, "Give one of --new-key-env, --new-key-file")
        add(["sql", "enc.db", "--key-keyring", "app", "SELECT 1"], 64, "--key-keyring takes SERVICE/ACCOUNT (say dbcrypt/app), not app")
        add(["sql", "enc.db", "--key-kernel-keyring", "", "SELECT 1"], 64, "--key-kernel-keyring takes a NAME")
        add(["key", "create"], 64, "Name one key: --keyring SERVICE/ACCOUNT, --kernel-keyring NAME or --credential NAME")
        add(["key", "create", "--keyring", "a/b", "--kernel-keyring", "c"], 64, "Name one key")

        // Key stores: a missing key changes nothing and makes nothing.
        add(["sql", "enc.db", "--key-kernel-keyring", "dbcrypt-corpus-missing", "SELECT 1"], 6, "The kernel keyring holds no key named dbcrypt:dbcrypt-corpus-missing")
        add(["decrypt", "enc.db", "-o", "out.db", "--key-credential", "db"], 5, "CREDENTIALS_DIRECTORY is not set")
        add(["key", "create", "--credential", "db"], 64, "--credential goes with key exists")
        add(["sql", "enc.db", "--key-credential", "../key", "SELECT 1"], 64, "--key-credential takes the credential's NAME")
        add(["migrate", "plain.db", "--key-credential", "db"], 5, "CREDENTIALS_DIRECTORY is not set")
        add(["key", "exists", "--kernel-keyring", "dbcrypt-corpus-missing"], 6, "holds no key named")
        add(["sql", "enc.db", "--json", "--csv", "SELECT 1"] + key, 64, "Give --json or --csv, not both")
        add(["info", "enc.db", "extra"] + key, 64, "Unexpected argument 'extra'")
        add([], 64, "Give a command: see 'dbcrypt --help'.")
        add(["check", "enc.db", "--key-env", "OTHER"] + key, 64, "--key-env is given more than once")
        add(["decrypt", "enc.db", "-o", "a.db", "--force", "--force"] + key, 64, "--force is given more than once")
        add(["decrypt", "enc.db", "-o", "a.db", "--output", "b.db"] + key, 64, "--output is given more than once")
        add(["decrypt", "enc.db", "-oa.db", "-ob.db"] + key, 64, "--output is given more than once")
        // The names come from the command run: a nested one, a default one, one named by its alias.
        add(["backup", "enc.db", "-o", "a.db", "--output", "b.db"] + key, 64, "--output is given more than once")
        add(["backup", "continuous", "enc.db", "-o", "a", "--output", "b"] + key, 64, "--output is given more than once")
        add(["kv", "get", "enc.db", "n", "--store", "a", "--store", "b"] + key, 64, "--store is given more than once")
        add(["shell", "enc.db", "--history", "--history"] + key, 64, "--history is given more than once")
        return cases
    }

    func testEveryCaseExitsWithOneLineAndChangesNothing() throws {
        let environment = keyEnvironment.merging(["EMPTY": "", "PASSPHRASE": realPassphrase]) { $1 }
        var expected = try snapshotFiles(in: work)
        let all = cases
        for item in all {
            let run = try dbcrypt(item.arguments, environment: environment, in: work)
            let label = "dbcrypt " + item.arguments.joined(separator: " ")
            XCTAssertEqual(run.status, item.status, "\(label): \(run.stderr)")
            // `check` reports a damaged file's pages on stdout, one per line.
            if !(item.arguments.first == "check" && item.status == 4) { XCTAssertEqual(run.stdout, "", label) }
            XCTAssertTrue(run.stderr.hasPrefix("dbcrypt: ") && run.stderr.hasSuffix("\n"), "\(label): \(run.stderr)")
            XCTAssertEqual(run.stderr.filter { $0 == "\n" }.count, 1, "\(label): not one line: \(run.stderr)")
            XCTAssertTrue(run.stderr.contains(item.says), "\(label): \(run.stderr)")
            let now = try snapshotFiles(in: work)
            if now != expected {
                XCTFail("\(label) changed files: \(Set(now.keys).symmetricDifference(expected.keys).sorted()) "
                        + "\(expected.filter { now[$0.key] != nil && now[$0.key] != $0.value }.keys.sorted())")
                try FileManager.default.removeItem(at: work)
                try FileManager.default.createDirectory(at: work, withIntermediateDirectories: false)
                try makeFixture(in: work)
                expected = try snapshotFiles(in: work)
            }
        }
        print("bad-input corpus: \(all.count) cases")
    }
}
