import DBCrypt
import Foundation
import XCTest

/// `dbcrypt backup --continuous` and `dbcrypt restore`.
final class ContinuousBackupCommandTests: XCTestCase {
    /// An app commits while `dbcrypt backup --continuous` runs beside it;
    /// SIGTERM ships the last commits; `dbcrypt restore` rebuilds the last
    /// one, and any earlier one the backup printed.
    func testBacksUpEveryCommitOfARunningAppAndRestoresAnyOfThem() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let destination = dir.appendingPathComponent("backup").path
        let pool = try DatabasePool(path: path, key: testKey)
        try pool.write { db in try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)") }

        let backup = try ChildProcess(dbcryptPath, ["backup", path, "--continuous", "-o", destination, "--interval", "0.05", "--key-env", "KEY"],
                                      environment: keyEnvironment)
        // Records only: a record being written is there twice for a moment (its temporary, linked into place).
        func records() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: destination)) ?? []).filter { !$0.hasPrefix(".") } }
        // The app commits once the backup has taken its first snapshot.
        assertEventually("the backup took no snapshot") { records().contains { $0.contains("-snapshot-") } || !backup.process.isRunning }
        var rowsAt: [Int] = []
        for round in 0..<20 {
            let shippedBefore = records().count
            try pool.write { db in
                for _ in 0...round { try db.execute("INSERT INTO item(body) VALUES (hex(randomblob(50)))") }
            }
            rowsAt.append(try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM item") }!)
            // Each round is shipped in a record of its own before the next commits.
            assertEventually("round \(round) was not shipped") { records().count > shippedBefore || !backup.process.isRunning }
        }
        backup.process.terminate()
        let (status, printed, complaint) = backup.finish()
        XCTAssertEqual(status, 0, complaint)
        let shipped = printed.split(separator: "\n").compactMap { line in line.split(separator: " ").dropFirst(2).first.flatMap { UInt64($0) } }
        XCTAssertGreaterThan(shipped.count, 2, printed)

        let restored = dir.appendingPathComponent("restored.db").path
        let run = try dbcrypt(["restore", destination, "-o", restored, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.hasPrefix("Restored commit \(shipped.last!), shipped at "), run.stdout)
        XCTAssertEqual(try rows(restored), rowsAt.last)

        // An earlier commit the backup printed is one state the app had.
        let middle = shipped[shipped.count / 2]
        let earlier = dir.appendingPathComponent("earlier.db").path
        let again = try dbcrypt(["restore", destination, "-o", earlier, "--commit", "\(middle)", "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(again.status, 0, again.stderr)
        let earlierRows = try rows(earlier)
        XCTAssertTrue(rowsAt.contains(earlierRows) || earlierRows == 0, "\(earlierRows) rows: not a state the app had")
        try pool.close()
    }

    /// A second continuous backup into a destination that one writes to is
    /// refused in one sentence (two once lost commits they reported
    /// shipped, their records replacing each other's); the database renamed
    /// over while the backup runs ends it with status 1.
    func testOneWriterPerDestinationAndADatabaseReplacedUnderIt() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let destination = dir.appendingPathComponent("backup").path
        let pool = try DatabasePool(path: path, key: testKey)
        try pool.write { db in try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)") }
        try pool.close()
        let backup = try ChildProcess(dbcryptPath, ["backup", path, "--continuous", "-o", destination, "--interval", "0.05", "--key-env", "KEY"],
                                      environment: keyEnvironment)
        assertEventually("the backup took no snapshot") {
            ((try? FileManager.default.contentsOfDirectory(atPath: destination)) ?? []).contains { $0.contains("-snapshot-") } || !backup.process.isRunning
        }
        let second = try dbcrypt(["backup", "continuous", path, "--once", "-o", destination, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(second.status, 1, second.stderr)
        XCTAssertEqual(second.stderr, "dbcrypt: Another backup is writing to \(destination): stop it first, or back up to another destination.\n")

        let other = dir.appendingPathComponent("other.db").path
        let replacement = try DatabasePool(path: other, key: testKey)
        try replacement.write { db in try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)") }
        try replacement.close()
        XCTAssertEqual(rename(other, path), 0)
        let (status, _, complaint) = backup.finish()
        XCTAssertEqual(status, 1, complaint)
        XCTAssertTrue(complaint.hasSuffix("\(path) was replaced by another file while its backup ran: the backup stopped, and the new file is not in it. Back up the new file to a new destination.\n"), complaint)
    }

    /// `--receipt` keeps the last commit shipped apart from the backup;
    /// `restore --expect-at-least` refuses the backup rolled back to before
    /// it (status 4), which a restore without it takes as a backup stopped earlier.
    func testAReceiptRefusesABackupRolledBack() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let destination = dir.appendingPathComponent("backup").path
        let receipt = dir.appendingPathComponent("app.db-receipt").path
        let pool = try DatabasePool(path: path, key: testKey)
        try pool.write { db in try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)") }
        var before: Set<String> = []
        for round in 0..<2 {
            before = Set((try? FileManager.default.contentsOfDirectory(atPath: destination)) ?? [])
            try pool.write { db in try db.execute("INSERT INTO item(body) VALUES ('r\(round)')") }
            let once = try dbcrypt(["backup", path, "--continuous", "--once", "-o", destination, "--receipt", receipt, "--key-env", "KEY"],
                                   environment: keyEnvironment)
            XCTAssertEqual(once.status, 0, once.stderr)
        }
        try pool.close()
        let kept = try String(contentsOfFile: receipt, encoding: .utf8)
        XCTAssertTrue(kept.hasPrefix("dbcrypt-backup-receipt 1 "), kept)
        let out = dir.appendingPathComponent("out.db").path
        let good = try dbcrypt(["restore", destination, "-o", out, "--expect-at-least", receipt, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(good.status, 0, good.stderr)

        // The last round's records removed: the destination rolled back.
        for name in Set(try FileManager.default.contentsOfDirectory(atPath: destination)).subtracting(before) {
            try FileManager.default.removeItem(atPath: destination + "/" + name)
        }
        let rolledBack = dir.appendingPathComponent("rolled-back.db").path
        let refused = try dbcrypt(["restore", destination, "-o", rolledBack, "--expect-at-least", receipt, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(refused.status, 4, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("is not the one its receipt expects") && refused.stderr.contains("rolled back"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: rolledBack))
        XCTAssertEqual(try dbcrypt(["restore", destination, "-o", rolledBack, "--key-env", "KEY"], environment: keyEnvironment).status, 0)

        let junk = dir.appendingPathComponent("junk").path
        FileManager.default.createFile(atPath: junk, contents: Data("not a receipt".utf8))
        let bad = try dbcrypt(["restore", destination, "-o", out + "2", "--expect-at-least", junk, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(bad.status, 1, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("is not a receipt"), bad.stderr)

        // A receipt is renamed over its path: never over the database, by any name, or its log.
        let link = dir.appendingPathComponent("link.db").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "app.db")
        let database = try contents(path)
        for misnamed in [path, link, path + "-wal"] {
            let refusal = try dbcrypt(["backup", "continuous", path, "--once", "-o", destination, "--receipt", misnamed, "--key-env", "KEY"],
                                      environment: keyEnvironment)
            XCTAssertEqual(refusal.status, 1, refusal.stderr)
            XCTAssertTrue(refusal.stderr.contains("is the input database itself"), refusal.stderr)
        }
        XCTAssertEqual(try contents(path), database)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"))
    }

    /// A database in `dir` with one row per round, backed up with
    /// `--continuous --once` after each of four rounds: its path, the
    /// backup's directory, its records' names in order, and the commits shipped.
    private func backedUpInFourRounds(_ dir: URL) throws -> (path: String, destination: String, records: [String], shipped: [String]) {
        let path = dir.appendingPathComponent("app.db").path
        let destination = dir.appendingPathComponent("backup").path
        let pool = try DatabasePool(path: path, key: testKey)
        try pool.write { db in try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)") }
        var shipped: [String] = []
        for round in 0..<4 {
            try pool.write { db in try db.execute("INSERT INTO item(body) VALUES ('r\(round)')") }
            let once = try dbcrypt(["backup", path, "--continuous", "--once", "-o", destination, "--key-env", "KEY"], environment: keyEnvironment)
            XCTAssertEqual(once.status, 0, once.stderr)
            shipped += once.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").dropFirst(2).first.map(String.init) }
        }
        try pool.close()
        return (path, destination, try FileManager.default.contentsOfDirectory(atPath: destination).sorted(), shipped)
    }

    func testOnceAMissingRecordAndWrongInput() throws {
        let dir = try makeTemporaryDirectory(self)
        let (path, destination, records, shipped) = try backedUpInFourRounds(dir)
        let frames = records.filter { $0.contains("-frames-") }
        XCTAssertGreaterThanOrEqual(frames.count, 2, "\(records)")
        try FileManager.default.removeItem(atPath: (destination as NSString).appendingPathComponent(frames[0]))
        // The commit the missing record held: the message names the record, not only what is left.
        XCTAssertEqual(shipped.count, 4, "\(shipped)")
        let gap = try dbcrypt(["restore", destination, "-o", dir.appendingPathComponent("gap.db").path, "--commit", shipped[1],
                               "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(gap.status, 1, gap.stderr)
        XCTAssertTrue(gap.stderr.contains("is missing"), gap.stderr)
        let restored = dir.appendingPathComponent("restored.db").path
        let run = try dbcrypt(["restore", destination, "-o", restored, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("is missing; restored the last commit before it."), run.stderr)

        let out = dir.appendingPathComponent("out.db").path
        let wrong = try dbcrypt(["restore", destination, "-o", out, "--key-env", "OTHER"], environment: keyEnvironment)
        XCTAssertEqual(wrong.status, 3, wrong.stderr)
        XCTAssertEqual(try dbcrypt(["restore", destination, "-o", out, "--at", "yesterday", "--key-env", "KEY"], environment: keyEnvironment).status, 64)
        XCTAssertEqual(try dbcrypt(["restore", destination, "-o", out, "--commit", "1", "--latest", "--key-env", "KEY"], environment: keyEnvironment).status, 64)
        XCTAssertEqual(try dbcrypt(["backup", path, "-o", destination, "--once", "--key-env", "KEY"], environment: keyEnvironment).status, 64)
        let missing = try dbcrypt(["restore", dir.appendingPathComponent("nowhere").path, "-o", out, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("No backup directory at"), missing.stderr)
        let beyond = try dbcrypt(["restore", destination, "-o", out, "--commit", "99", "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(beyond.status, 1)
        XCTAssertTrue(beyond.stderr.contains("holds no commit 99: it holds commit"), beyond.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))

        let plain = dir.appendingPathComponent("plain.db").path
        try makePlaintextDatabase(plain)
        let plainRun = try dbcrypt(["backup", plain, "--continuous", "--once", "-o", destination], environment: keyEnvironment)
        XCTAssertEqual(plainRun.status, 1)
        XCTAssertTrue(plainRun.stderr.contains("is not encrypted: a continuous backup ships encrypted pages"), plainRun.stderr)
        // The first spelling still works, and says the current one (which says nothing: see the second backup above).
        XCTAssertTrue(plainRun.stderr.hasPrefix("dbcrypt: note: dbcrypt backup DB --continuous is now spelled dbcrypt backup continuous DB"),
                      plainRun.stderr)
    }

    /// A FIFO or a directory named like a record is junk, as a junk file
    /// is: skipped and named, never waited on. A restore changes nothing in
    /// the directory it reads (it once deleted `.keep.2024`, taken for a dead
    /// writer's temporary), and never writes its output inside it.
    func testJunkEntriesAReaderThatChangesNothingAndAnOutputInsideTheBackup() throws {
        let dir = try makeTemporaryDirectory(self)
        let (_, destination, records, _) = try backedUpInFourRounds(dir)
        let frames = records.filter { $0.contains("-frames-") }
        XCTAssertGreaterThanOrEqual(frames.count, 2, "\(records)")
        func entry(_ name: String) -> String { (destination as NSString).appendingPathComponent(name) }
        // The last frames record becomes a FIFO, then a directory, of the same name.
        let last = frames.last!
        try FileManager.default.removeItem(atPath: entry(last))
        XCTAssertEqual(mkfifo(entry(last), 0o600), 0)
        try Data("kept".utf8).write(to: URL(fileURLWithPath: entry(".keep.2024")))
        try Data("kept".utf8).write(to: URL(fileURLWithPath: entry(".notes.99999999-1")))
        let before = try snapshotFiles(in: URL(fileURLWithPath: destination))
        for junk in ["FIFO", "directory"] {
            if junk == "directory" {
                unlink(entry(last))
                try FileManager.default.createDirectory(atPath: entry(last), withIntermediateDirectories: false)
            }
            let out = dir.appendingPathComponent("out-\(junk).db").path
            let run = try dbcrypt(["restore", destination, "-o", out, "--key-env", "KEY"], environment: keyEnvironment)
            XCTAssertEqual(run.status, 0, "\(junk): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("is junk: it is a"), "\(junk): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("restored the last commit before it"), "\(junk): \(run.stderr)")
            XCTAssertEqual(try rows(out), 3, junk)
            if junk == "FIFO" { XCTAssertEqual(try snapshotFiles(in: URL(fileURLWithPath: destination)), before, "restore changed the backup") }
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: entry(".keep.2024")))
        XCTAssertTrue(FileManager.default.fileExists(atPath: entry(".notes.99999999-1")))

        let snapshot = try XCTUnwrap(records.first { $0.contains("-snapshot-") })
        let beforeInside = try contents(entry(snapshot))
        for output in [entry(snapshot), entry("new.db")] {
            let inside = try dbcrypt(["restore", destination, "-o", output, "--force", "--key-env", "KEY"], environment: keyEnvironment)
            XCTAssertEqual(inside.status, 1, inside.stderr)
            XCTAssertTrue(inside.stderr.contains("inside the backup being read"), inside.stderr)
        }
        XCTAssertEqual(try contents(entry(snapshot)), beforeInside)
        XCTAssertFalse(FileManager.default.fileExists(atPath: entry("new.db")))

        // No snapshot can be read at all: that is what is said, not "check the key".
        for name in records where name.contains("-snapshot-") {
            unlink(entry(name))
            try FileManager.default.createDirectory(atPath: entry(name), withIntermediateDirectories: false)
        }
        let unreadable = try dbcrypt(["restore", destination, "-o", dir.appendingPathComponent("none.db").path, "--key-env", "KEY"],
                                     environment: keyEnvironment)
        XCTAssertEqual(unreadable.status, 4, unreadable.stderr)
        XCTAssertTrue(unreadable.stderr.contains("it is a directory"), unreadable.stderr)
        XCTAssertFalse(unreadable.stderr.contains("check the key"), unreadable.stderr)
    }

    private func rows(_ path: String) throws -> Int {
        var options = Database.Options()
        options.readOnly = true
        let db = try Database(path: path, key: testKey, options: options)
        defer { db.close() }
        XCTAssertEqual(try db.integrityProblems(), [])
        return try db.fetchScalar(Int.self, "SELECT count(*) FROM item") ?? 0
    }
}
