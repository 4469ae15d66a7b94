import DBCrypt
import Foundation
import XCTest

/// The path a user names is the file they mean: links, hard links, an output
/// that is the input, read-only sources, owners and modes.
final class FileIdentityCommandTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = try makeTemporaryDirectory(self)
    }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    private func isEncrypted(_ path: String) throws -> Bool { try FileFormat.detect(at: path) == .notPlaintext }

    private func mode(_ path: String) -> (uid: uid_t, gid: gid_t, mode: mode_t) {
        var info = stat()
        _ = stat(path, &info)
        return (info.st_uid, info.st_gid, info.st_mode & 0o7777)
    }

    func testInPlaceRoutinesWorkOnASymbolicLinksTarget() throws {
        try makePlaintextDatabase(path("real.db"))
        XCTAssertEqual(symlink("real.db", path("app.db")), 0)
        let migrated = try dbcrypt(["migrate", path("app.db"), "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(migrated.status, 0, migrated.stderr)
        XCTAssertTrue(try isEncrypted(path("real.db")), "the link's target is the file encrypted")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: path("app.db")), "real.db", "the link stays a link")

        let rekeyed = try dbcrypt(["rekey", path("app.db"), "--key-env", "KEY", "--new-key-env", "OTHER"], environment: keyEnvironment)
        XCTAssertEqual(rekeyed.status, 0, rekeyed.stderr)
        XCTAssertNoThrow(try Database(path: path("real.db"), key: otherKey))
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: path("app.db")), "real.db")
    }

    func testAFileWithOtherHardLinksIsRefusedUnlessForced() throws {
        try makePlaintextDatabase(path("app.db"))
        XCTAssertEqual(link(path("app.db"), path("backup-name.db")), 0)
        let before = try contents(path("app.db"))
        let refused = try dbcrypt(["migrate", path("app.db"), "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("1 other name(s) (hard links)"), refused.stderr)
        XCTAssertEqual(try contents(path("app.db")), before)

        let forced = try dbcrypt(["migrate", path("app.db"), "--key-env", "KEY", "--force"], environment: keyEnvironment)
        XCTAssertEqual(forced.status, 0, forced.stderr)
        XCTAssertTrue(try isEncrypted(path("app.db")))
        XCTAssertFalse(try isEncrypted(path("backup-name.db")), "--force accepted that the other name keeps the old content")

        XCTAssertEqual(link(path("app.db"), path("third-name.db")), 0)
        let rekey = try dbcrypt(["rekey", path("app.db"), "--key-env", "KEY", "--new-key-env", "OTHER"], environment: keyEnvironment)
        XCTAssertEqual(rekey.status, 1)
        XCTAssertTrue(rekey.stderr.contains("hard links"), rekey.stderr)
    }

    func testAnOutputThatIsTheInputIsRefusedEvenWithForce() throws {
        try makePlaintextDatabase(path("plain.db"))
        XCTAssertEqual(try dbcrypt(["migrate", path("plain.db"), "-o", path("e.db"), "--key-env", "KEY"],
                                   environment: keyEnvironment).status, 0)
        XCTAssertEqual(symlink(path("e.db"), path("link-to-e.db")), 0)
        XCTAssertEqual(link(path("e.db"), path("hard-e.db")), 0)
        XCTAssertEqual(symlink(path("plain.db"), path("link-to-plain.db")), 0)
        let before = try contents(path("e.db"))
        for output in [path("e.db"), path("link-to-e.db"), path("hard-e.db"), dir.path + "/./e.db"] {
            for force in [[], ["--force"]] {
                let run = try dbcrypt(["decrypt", path("e.db"), "-o", output, "--key-env", "KEY"] + force, environment: keyEnvironment)
                XCTAssertEqual(run.status, 1, output)
                XCTAssertTrue(run.stderr.contains("is the input database itself"), run.stderr)
            }
        }
        XCTAssertEqual(try contents(path("e.db")), before)
        let migrate = try dbcrypt(["migrate", path("plain.db"), "-o", path("link-to-plain.db"), "--key-env", "KEY", "--force"],
                                  environment: keyEnvironment)
        XCTAssertEqual(migrate.status, 1)
        XCTAssertFalse(try isEncrypted(path("plain.db")))
    }

    /// A database is its file and its `-wal`, `-shm` and `-journal`:
    /// `backup app.db -o app.db-wal --force` once replaced the log that held
    /// 15 commits. No command writes over a companion of its input (by its
    /// name or another), nor a file named as an existing file's companion.
    func testTheInputsCompanionsAreNeverAnOutput() throws {
        var options = Database.Options()
        options.journalMode = .wal
        let app = try Database(path: path("app.db"), key: testKey, options: options)
        defer { app.close() }
        try app.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: path("app.db-wal")))
        XCTAssertEqual(link(path("app.db-wal"), path("log-by-another-name")), 0)
        try makePlaintextDatabase(path("other.db"))
        // The -shm is the live connection's index, which any reader updates: the files themselves are compared.
        func files() throws -> [Data] { try ["app.db", "app.db-wal", "log-by-another-name", "other.db"].map { try contents(path($0)) } }
        let before = try files()
        for output in ["app.db-wal", "app.db-shm", "app.db-journal", "log-by-another-name"] {
            for command in [["backup", "app.db", "-o", output], ["decrypt", "app.db", "-o", output], ["recover", "app.db", "-o", output],
                            ["header", "app.db", "--plaintext-header", "32", "-o", output]] {
                let run = try dbcrypt(command + ["--key-env", "KEY", "--force"], environment: keyEnvironment, in: dir)
                XCTAssertEqual(run.status, 1, "\(command): \(run.stderr)")
                // `header` refuses a database another connection holds before it looks at its output.
                XCTAssertTrue(run.stderr.contains("is the input database itself") || command[0] == "header" && run.stderr.contains("is in use"),
                              "\(command): \(run.stderr)")
                XCTAssertEqual(try files(), before, "\(command) changed a file")
            }
        }
        // Another database's companion by name: SQLite would take the new file for its log.
        let run = try dbcrypt(["migrate", "other.db", "-o", "app.db-journal", "--key-env", "KEY", "--force"], environment: keyEnvironment, in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("named as the -journal of"), run.stderr)
        XCTAssertEqual(try app.fetchScalar(Int.self, "SELECT count(*) FROM t"), 2)
    }

    /// `--force` replaced a file but left its old `-wal` beside it, which
    /// decrypts with the same key: SQLite laid the old commits over the new
    /// pages (a malformed file, or the old rows instead of the new). Every
    /// command that replaces a file takes its companions with it, and
    /// without `--force` a companion left beside a missing file is refused
    /// as the file would be.
    func testReplacingAFileTakesItsCompanionsWithIt() throws {
        var options = Database.Options()
        options.journalMode = .wal
        let source = try Database(path: path("source.db"), key: testKey, options: options)
        try source.execute("CREATE TABLE t(x)")
        for row in 1...10 { try source.execute("INSERT INTO t VALUES (?)", [row]) }
        source.close()
        try makePlaintextDatabase(path("plain.db"))
        let backedUp = try dbcrypt(["backup", "source.db", "--continuous", "--once", "-o", "history", "--key-env", "KEY"],
                                   environment: keyEnvironment, in: dir)
        XCTAssertEqual(backedUp.status, 0, backedUp.stderr)
        /// The one value a `SELECT count(*)` printed, under its column's name.
        func count(_ run: Run) -> String { run.stdout.split(separator: "\n").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
        let plainRows = count(try dbcrypt(["sql", "plain.db", "SELECT count(*) FROM note"], in: dir))

        /// An app killed with 60 commits in its -wal: the file and its companions as it left them.
        func leaveAKilledAppsFiles(at name: String) throws {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path(name + suffix)) }
            let app = try Database(path: path("killed.db"), key: testKey, options: options)
            defer { app.close() }
            try app.execute("CREATE TABLE IF NOT EXISTS t(x); DELETE FROM t")
            for row in 1...200 { try app.execute("INSERT INTO t VALUES (?)", [row]) }
            try app.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            for row in 200...259 { try app.execute("INSERT INTO t VALUES (?)", [row]) }
            for suffix in ["", "-wal", "-shm"] { try FileManager.default.copyItem(atPath: path("killed.db" + suffix), toPath: path(name + suffix)) }
            try Data("a stale journal".utf8).write(to: URL(fileURLWithPath: path(name + "-journal")))
        }
        let cases: [(command: [String], opens: [String], rows: String)] = [
            (["backup", "source.db"], ["--key-env", "KEY"], "10"),
            (["restore", "history"], ["--key-env", "KEY"], "10"),
            (["recover", "source.db"], [], "10"),
            (["decrypt", "source.db"], [], "10"),
            (["migrate", "plain.db"], ["--key-env", "KEY"], plainRows),
        ]
        for (command, opens, rows) in cases {
            try leaveAKilledAppsFiles(at: "out.db")
            let refused = try dbcrypt(command + ["-o", "out.db", "--key-env", "KEY"], environment: keyEnvironment, in: dir)
            XCTAssertEqual(refused.status, 1, "\(command) without --force: \(refused.stderr)")
            for suffix in ["", "-wal", "-shm"] { unlink(path("out.db" + suffix)) }
            let alone = try dbcrypt(command + ["-o", "out.db", "--key-env", "KEY"], environment: keyEnvironment, in: dir)
            XCTAssertEqual(alone.status, 1, "\(command) beside a stale -journal, without --force: \(alone.stderr)")
            XCTAssertTrue(alone.stderr.contains("out.db-journal"), alone.stderr)

            try leaveAKilledAppsFiles(at: "out.db")
            let forced = try dbcrypt(command + ["-o", "out.db", "--key-env", "KEY", "--force"], environment: keyEnvironment, in: dir)
            XCTAssertEqual(forced.status, 0, "\(command): \(forced.stderr)")
            for suffix in ["-wal", "-shm", "-journal"] {
                XCTAssertFalse(FileManager.default.fileExists(atPath: path("out.db" + suffix)), "\(command) left out.db\(suffix)")
            }
            let table = command[0] == "migrate" ? "note" : "t"
            let read = try dbcrypt(["sql", "out.db", "SELECT count(*) FROM \(table)"] + opens, environment: keyEnvironment, in: dir)
            XCTAssertEqual(read.status, 0, "\(command): \(read.stderr)")
            XCTAssertEqual(count(read), rows, "\(command): the old log was laid over the new file")
        }
    }

    /// `-o /dev/null --force` once replaced the device node with a regular
    /// file holding the plaintext. An output that is not a regular file (a
    /// device, a FIFO, or a link to one) is refused, `--force` or not, and
    /// stays what it was; so is such a file given as a database.
    func testOutputsThatAreNotRegularFilesAreRefusedEvenWithForce() throws {
        try makePlaintextDatabase(path("plain.db"))
        XCTAssertEqual(try dbcrypt(["migrate", path("plain.db"), "-o", path("e.db"), "--key-env", "KEY"],
                                   environment: keyEnvironment).status, 0)
        XCTAssertEqual(mkfifo(path("fifo"), 0o600), 0)
        XCTAssertEqual(symlink(path("fifo"), path("link-to-fifo")), 0)
        var outputs = [path("fifo"), path("link-to-fifo")]
        // A device node of our own (root only), never the system's /dev/null.
        var null = stat()
        if getuid() == 0, stat("/dev/null", &null) == 0, mknod(path("null"), S_IFCHR | 0o666, null.st_rdev) == 0 {
            outputs.append(path("null"))
        }
        let before = try snapshotFiles(in: dir)
        for output in outputs {
            for command in [["decrypt", path("e.db"), "-o", output], ["migrate", path("plain.db"), "-o", output],
                            ["recover", path("e.db"), "-o", output], ["header", path("e.db"), "--plaintext-header", "32", "-o", output]] {
                let run = try dbcrypt(command + ["--key-env", "KEY", "--force"], environment: keyEnvironment)
                XCTAssertEqual(run.status, 1, "\(command): \(run.stderr)")
                XCTAssertTrue(run.stderr.contains("not a regular file"), "\(command): \(run.stderr)")
                XCTAssertEqual(try snapshotFiles(in: dir), before, "\(command) changed a file")
            }
            let run = try dbcrypt(["sql", output, "SELECT 1", "--create"])
            XCTAssertEqual(run.status, 1, "sql --create \(output): \(run.stderr)")
            XCTAssertEqual(try snapshotFiles(in: dir), before, "sql --create \(output) changed a file")
        }
    }

    func testAnInPlaceResultKeepsItsOwnerGroupAndMode() throws {
        try skipUnless(geteuid() == 0, "giving a file to another user needs root")
        try makePlaintextDatabase(path("app.db"))
        XCTAssertEqual(chown(path("app.db"), 65534, 65534), 0)
        XCTAssertEqual(chmod(path("app.db"), 0o640), 0)
        XCTAssertEqual(try dbcrypt(["migrate", path("app.db"), "--key-env", "KEY"], environment: keyEnvironment).status, 0)
        XCTAssertTrue(try isEncrypted(path("app.db")))
        XCTAssertTrue(mode(path("app.db")) == (65534, 65534, 0o640), "\(mode(path("app.db")))")
        XCTAssertEqual(try dbcrypt(["rekey", path("app.db"), "--key-env", "KEY", "--new-key-env", "OTHER"],
                                   environment: keyEnvironment).status, 0)
        XCTAssertTrue(mode(path("app.db")) == (65534, 65534, 0o640), "\(mode(path("app.db")))")
        // A new export stays private to whoever wrote it.
        XCTAssertEqual(try dbcrypt(["decrypt", path("app.db"), "-o", path("export.db"), "--key-env", "OTHER"],
                                   environment: keyEnvironment).status, 0)
        XCTAssertEqual(mode(path("export.db")).mode, 0o600)
    }

    func testASourceThatMayOnlyBeReadIsExported() throws {
        try skipUnless(geteuid() == 0, "reading as another user needs root")
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: false)
        XCTAssertEqual(chmod(out.path, 0o777), 0)
        XCTAssertEqual(chmod(dir.path, 0o755), 0)
        try makePlaintextDatabase(path("plain.db"))
        XCTAssertEqual(try dbcrypt(["migrate", path("plain.db"), "-o", path("e.db"), "--key-env", "KEY"],
                                   environment: keyEnvironment).status, 0)
        for file in ["plain.db", "e.db"] { XCTAssertEqual(chmod(path(file), 0o644), 0) }
        let before = try contents(path("e.db"))

        let decrypted = try dbcrypt(["decrypt", path("e.db"), "-o", out.appendingPathComponent("p.db").path, "--key-env", "KEY"],
                                    environment: keyEnvironment, as: 65534)
        XCTAssertEqual(decrypted.status, 0, decrypted.stderr)
        let migrated = try dbcrypt(["migrate", path("plain.db"), "-o", out.appendingPathComponent("e2.db").path, "--key-env", "KEY"],
                                   environment: keyEnvironment, as: 65534)
        XCTAssertEqual(migrated.status, 0, migrated.stderr)
        XCTAssertEqual(try contents(path("e.db")), before)
        XCTAssertEqual(try Database(path: out.appendingPathComponent("p.db").path).fetchScalar(Int.self, "SELECT count(*) FROM note"), 200)

        // In place needs write access, and says so.
        let inPlace = try dbcrypt(["rekey", path("e.db"), "--key-env", "KEY", "--new-key-env", "OTHER"], environment: keyEnvironment, as: 65534)
        XCTAssertEqual(inPlace.status, 1)
        XCTAssertTrue(inPlace.stderr.contains("Permission denied"), inPlace.stderr)

        // A WAL with changes not yet in the file cannot be read without write access.
        let wal = try Database(path: path("e.db"), key: testKey)
        try wal.execute("PRAGMA journal_mode = WAL; INSERT INTO author(name) VALUES ('only in the WAL')")
        let walRun = try dbcrypt(["decrypt", path("e.db"), "-o", out.appendingPathComponent("p2.db").path, "--key-env", "KEY"],
                                 environment: keyEnvironment, as: 65534)
        wal.close()
        XCTAssertEqual(walRun.status, 1)
        XCTAssertTrue(walRun.stderr.contains("write-ahead log"), walRun.stderr)
    }

    /// Writes this user may not make are named as such: a new database in
    /// a directory it may not write, a store in a file it may only read, a
    /// journal in a directory it may not write (were: "its directory does
    /// not exist", "SQLite error 8", "SQLite error 14").
    func testWritesThisUserMayNotMakeSaySo() throws {
        try skipUnless(geteuid() == 0, "running as another user needs root")
        XCTAssertEqual(chmod(dir.path, 0o755), 0)
        try makePlaintextDatabase(path("plain.db"))
        XCTAssertEqual(try dbcrypt(["migrate", path("plain.db"), "-o", path("e.db"), "--key-env", "KEY"],
                                   environment: keyEnvironment).status, 0)
        XCTAssertEqual(try dbcrypt(["migrate", path("plain.db"), "-o", path("w.db"), "--key-env", "KEY"],
                                   environment: keyEnvironment).status, 0)
        XCTAssertEqual(chmod(path("e.db"), 0o644), 0)
        XCTAssertEqual(chmod(path("w.db"), 0o666), 0)
        let before = try snapshotFiles(in: dir)
        let created = try dbcrypt(["sql", path("new.db"), "--create", "CREATE TABLE t(x)"], as: 65534)
        XCTAssertEqual(created.status, 1)
        XCTAssertEqual(created.stderr, "dbcrypt: Permission denied for \(dir.path): check the file's owner and mode.\n")
        for (file, says) in [("e.db", "this user may only read it"), ("w.db", "SQLite cannot make its journal beside it")] {
            let run = try dbcrypt(["kv", path(file), "set", "token", "--create", "--key-env", "KEY", "--store-key-env", "STORE"],
                                  environment: keyEnvironment, as: 65534, input: Data("value".utf8))
            XCTAssertEqual(run.status, 1, run.stderr)
            XCTAssertTrue(run.stderr.contains("Cannot write \(path(file)): \(says)"), run.stderr)
        }
        XCTAssertEqual(try snapshotFiles(in: dir), before)
    }

    /// A key file that is a FIFO (or a process substitution, `<(...)`) is
    /// read as a stream, as other tools read it.
    func testAKeyFileThatIsAFIFOIsRead() throws {
        try makePlaintextDatabase(path("plain.db"))
        XCTAssertEqual(try dbcrypt(["migrate", path("plain.db"), "-o", path("e.db"), "--key-env", "KEY"],
                                   environment: keyEnvironment).status, 0)
        XCTAssertEqual(mkfifo(path("key"), 0o600), 0)
        let writer = try ChildProcess("/bin/sh", ["-c", "printf '%s' \"$KEY\" > \"$1\"", "sh", path("key")], environment: ["KEY": keyText])
        let run = try dbcrypt(["check", path("e.db"), "--key-file", path("key")])
        XCTAssertEqual(writer.finish().status, 0)
        XCTAssertEqual(run.status, 0, run.stderr)
    }

    func testSmallerOnes() throws {
        let sql = try dbcrypt(["sql", path("missing.db"), "SELECT 1"])
        XCTAssertEqual(sql.status, 1)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("missing.db")), "sql does not create a database by default")
        XCTAssertEqual(try dbcrypt(["sql", path("missing.db"), "--create", "CREATE TABLE t(x)"]).status, 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path("missing.db")))

        try makePlaintextDatabase(path("plain.db"))
        XCTAssertEqual(try dbcrypt(["migrate", path("plain.db"), "--key-env", "KEY"], environment: keyEnvironment).status, 0)
        let unset = try dbcrypt(["rekey", path("plain.db"), "--key-env", "KEY", "--new-key-env", "DBCRYPT_UNSET_VARIABLE"],
                                environment: keyEnvironment)
        XCTAssertEqual(unset.status, 1)
        XCTAssertTrue(unset.stderr.contains("or use --new-key-file"), unset.stderr)
    }
}
