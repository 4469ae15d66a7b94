import DBCrypt
import Foundation
import XCTest

/// Every `dbcrypt` command that writes a database, killed with SIGKILL at
/// random moments, the instant its temporary file (or journal) appears, just
/// before the rename that puts the new file in place, right after it, and
/// before the directory's sync that makes it durable. After every kill the
/// files hold the complete old state or the complete new one; the source of
/// an export is byte-identical; the next run removes what the killed ones
/// left behind. What the CLI adds to the library's routines (whose own kill
/// tests are DatabaseEncryptionCrashTests and DatabaseBackupTests): outputs
/// named by -o, WAL sources, exports to plaintext, restores and schema
/// migrations. `make test` kills each point once on 20,000 rows; `make
/// kill-tests` runs the full campaign on 300,000 (``KillCampaign``).
final class CommandKillTests: XCTestCase {
    static let rows = KillCampaign.size(quick: 20_000, full: 300_000)
    let key = testKey
    let newKey = otherKey
    var dir: URL!
    var plainTemplate: String!

    /// The plaintext fixture, built once per run: each test reads it, or
    /// makes its own from it.
    private static let template = SharedFixture("command-kill-template.db") { path in
        let db = try Database(path: path)
        try db.execute("""
            PRAGMA user_version = 3;
            CREATE TABLE author(id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE note(id INTEGER PRIMARY KEY, author_id INTEGER, title TEXT, body BLOB, score REAL);
            CREATE INDEX note_by_author ON note(author_id, score);
            INSERT INTO author(name) VALUES ('Ada'), ('Grace');
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
            INSERT INTO note SELECT i, i % 2 + 1, 'note "' || i || '"', CAST(i * 7 AS BLOB), i / 4.0 FROM n;
            """)
        db.close()
    }

    override func setUpWithError() throws {
        dir = try makeTemporaryDirectory(self)
        plainTemplate = try Self.template.path()
    }

    // MARK: - Exports to another file

    func testKilledMigrateToAnOutputLeavesTheSourceAndNoPartialOutput() throws {
        let output = dir.appendingPathComponent("out.db").path
        let expected = try fingerprint(plainTemplate, key: nil)
        let source = try contents(plainTemplate)
        try campaign(
            arguments: ["migrate", plainTemplate, "-o", output, "--key-env", "KEY"], target: output,
            restore: { removeDatabaseFiles(output) },
            state: {
                XCTAssertEqual(try contents(plainTemplate), source, "the source changed")
                guard FileManager.default.fileExists(atPath: output) else { return .original }
                XCTAssertEqual(try fingerprint(output, key: key), expected)
                return .replaced
            })
    }

    func testKilledDecryptLeavesTheSourceAndNoPartialOutput() throws {
        let encrypted = dir.appendingPathComponent("enc.db").path
        try DatabaseEncryption.encrypt(plainTemplate, to: encrypted, key: key)
        let output = dir.appendingPathComponent("plain.db").path
        let expected = try fingerprint(plainTemplate, key: nil)
        let source = try contents(encrypted)
        try campaign(
            arguments: ["decrypt", encrypted, "-o", output, "--key-env", "KEY"], target: output,
            restore: { removeDatabaseFiles(output) },
            state: {
                XCTAssertEqual(try contents(encrypted), source, "the source changed")
                guard FileManager.default.fileExists(atPath: output) else { return .original }
                XCTAssertEqual(try fingerprint(output, key: nil), expected)
                return .replaced
            })
    }

    /// `dbcrypt backup` of a database in WAL mode: the database and its
    /// log are left as they were, and the copy is there whole or not at all.
    func testKilledBackupLeavesTheDatabaseAndNoPartialCopy() throws {
        let encrypted = dir.appendingPathComponent("enc.db").path
        try makeWALCopy(of: plainTemplate, at: encrypted, key: key)
        let output = dir.appendingPathComponent("copy.db").path
        let expected = try fingerprint(encrypted, key: key)
        let source = try contents(encrypted), log = try contents(encrypted + "-wal")
        try campaign(
            arguments: ["backup", encrypted, "-o", output, "--key-env", "KEY"], target: output,
            restore: { removeDatabaseFiles(output) },
            state: {
                XCTAssertEqual(try contents(encrypted), source, "the database changed")
                XCTAssertEqual(try contents(encrypted + "-wal"), log, "the log changed")
                guard FileManager.default.fileExists(atPath: output) else { return .original }
                XCTAssertEqual(try fingerprint(output, key: key), expected)
                return .replaced
            })
    }

    /// `dbcrypt restore` from a continuous backup: the restored database is
    /// there whole or not at all.
    func testKilledRestoreLeavesNoPartialDatabase() throws {
        let encrypted = dir.appendingPathComponent("enc.db").path
        try makeWALCopy(of: plainTemplate, at: encrypted, key: key)
        let destination = dir.appendingPathComponent("backup").path
        try ContinuousBackup(path: encrypted, key: key, storage: try DirectoryBackupStorage(path: destination)).stop()
        let output = dir.appendingPathComponent("restored.db").path
        let expected = try fingerprint(encrypted, key: key)
        try campaign(
            arguments: ["restore", destination, "-o", output, "--key-env", "KEY"], target: output,
            restore: { removeDatabaseFiles(output) },
            state: {
                guard FileManager.default.fileExists(atPath: output) else { return .original }
                XCTAssertEqual(try fingerprint(output, key: key), expected)
                return .replaced
            })
    }

    /// An encrypted source whose last commits are only in its WAL: each
    /// kill leaves the file and its log byte for byte as they were (SQLite
    /// may rebuild the -shm index), and the output complete with them or absent.
    func testKilledDecryptOfAWALDatabaseLeavesItAndItsLog() throws {
        let template = dir.appendingPathComponent("wal-enc-template.db").path
        try makeWALCopy(of: plainTemplate, at: template, key: key)
        let path = dir.appendingPathComponent("app.db").path
        try copy(template, to: path)
        try copy(template + "-wal", to: path + "-wal")
        let source = try contents(path), log = try contents(path + "-wal")
        let expected = try fingerprint(template, key: key)
        let output = dir.appendingPathComponent("plain.db").path
        try campaign(
            arguments: ["decrypt", path, "-o", output, "--key-env", "KEY"], target: output,
            restore: { removeDatabaseFiles(output) },
            state: {
                XCTAssertEqual(try contents(path), source, "the source changed")
                XCTAssertEqual(try contents(path + "-wal"), log, "the source's log changed")
                guard FileManager.default.fileExists(atPath: output) else { return .original }
                XCTAssertEqual(try fingerprint(output, key: nil), expected)
                return .replaced
            })
    }

    // MARK: - In place

    /// A key change of an encrypted WAL source whose last commits are only
    /// in its log: the old file with its log, or the new file with them.
    func testKilledRekeyOfAWALDatabaseLeavesTheOldOrTheNewFile() throws {
        let template = dir.appendingPathComponent("wal-enc-template.db").path
        try makeWALCopy(of: plainTemplate, at: template, key: key)
        let path = dir.appendingPathComponent("app.db").path
        let expected = try fingerprint(template, key: key)
        try campaign(
            arguments: ["rekey", path, "--key-env", "KEY", "--new-key-env", "OTHER"], target: path,
            restore: {
                try copy(template, to: path)
                try copy(template + "-wal", to: path + "-wal")
                try? FileManager.default.removeItem(atPath: path + "-shm")
            },
            state: {
                if let old = try? fingerprint(path, key: key) {
                    XCTAssertEqual(old, expected)
                    return .original
                }
                XCTAssertEqual(fileSize(path + "-wal"), 0, "a WAL is left beside the new file")
                XCTAssertEqual(try fingerprint(path, key: newKey), expected)
                return .replaced
            })
    }

    func testKilledRekeyToSQLCipher3LeavesTheOldOrTheNewFile() throws {
        let template = dir.appendingPathComponent("enc-template.db").path
        try DatabaseEncryption.encrypt(plainTemplate, to: template, key: key)
        let path = dir.appendingPathComponent("app.db").path
        let expected = try fingerprint(plainTemplate, key: nil)
        let original = try contents(template)
        var sqlcipher3 = Database.Options()
        sqlcipher3.cipher = .sqlcipher3
        try campaign(
            arguments: ["rekey", path, "--key-env", "KEY", "--new-key-env", "OTHER", "--new-format", "sqlcipher3"], target: path,
            restore: { try copy(template, to: path) },
            state: {
                if try contents(path) == original { return .original }
                XCTAssertEqual(try fingerprint(path, key: newKey, options: sqlcipher3), expected)
                return .replaced
            })
    }

    /// A WAL source with committed frames not yet checkpointed: the frames
    /// must reach the encrypted file, and no stale WAL may meet it.
    func testKilledMigrateInPlaceOfAWALDatabaseLeavesTheOriginalOrTheEncryptedFile() throws {
        let template = dir.appendingPathComponent("wal-template.db").path
        try makeWALCopy(of: plainTemplate, at: template)
        let path = dir.appendingPathComponent("app.db").path
        let expected = try fingerprint(template, key: nil)
        try campaign(
            arguments: ["migrate", path, "--key-env", "KEY"], target: path,
            restore: {
                try copy(template, to: path)
                try copy(template + "-wal", to: path + "-wal")
            },
            state: {
                if try FileFormat.detect(at: path) != .notPlaintext {
                    XCTAssertEqual(try fingerprint(path, key: nil), expected)
                    return .original
                }
                XCTAssertEqual(fileSize(path + "-wal"), 0, "a WAL is left beside the encrypted file")
                XCTAssertEqual(try fingerprint(path, key: key), expected)
                return .replaced
            })
    }

    // MARK: - Schema migrations

    /// Three migrations, each in its own transaction: after any kill the
    /// database is at some version with exactly that version's schema and rows.
    func testKilledSchemaMigrationsLeaveAConsistentVersion() throws {
        let migrations = dir.appendingPathComponent("Migrations")
        try FileManager.default.createDirectory(at: migrations, withIntermediateDirectories: false)
        let files = [
            "0001_tags.sql": "CREATE TABLE tag(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO tag SELECT id, title FROM note;",
            "0002_tag_index.sql": "CREATE INDEX tag_by_name ON tag(name);",
            "0003_archived.sql": "ALTER TABLE note ADD COLUMN archived INTEGER NOT NULL DEFAULT 0; UPDATE note SET archived = id % 2;",
        ]
        for (name, sql) in files { try Data(sql.utf8).write(to: migrations.appendingPathComponent(name)) }
        let template = dir.appendingPathComponent("enc-template.db").path
        try DatabaseEncryption.encrypt(plainTemplate, to: template, key: key)
        try Database(path: template, key: key).execute("PRAGMA user_version = 0")
        let path = dir.appendingPathComponent("app.db").path
        let arguments = ["schema", path, "--dir", migrations.path, "--key-env", "KEY"]

        try copy(template, to: path)
        let started = Date()
        XCTAssertEqual(try dbcrypt(arguments, environment: keyEnvironment).status, 0)
        let duration = Date().timeIntervalSince(started)
        XCTAssertEqual(try schemaVersion(path), 3)

        var versions = [Int: Int]()
        try copy(template, to: path)
        let points = Array(repeating: KillPoint.random, count: KillCampaign.kills(quick: 4, full: 12))
            + Array(repeating: .fileAppears(directory: dir.path, prefix: "app.db-journal"), count: KillCampaign.kills(quick: 1, full: 4))
            + (1...3).map { KillPoint.fileAppearsAgain(directory: dir.path, prefix: "app.db-journal", times: $0) }
        let target = KillTarget(dbcryptPath, arguments, environment: keyEnvironment)
        for point in points {
            _ = try runAndKill(at: point, typicalDuration: duration, target: target)
            let version = try schemaVersion(path)
            versions[version, default: 0] += 1
            if version == 3 { try copy(template, to: path) }
        }
        print("schema: \(points.count) kills within \(Int(duration * 1000)) ms runs left versions \(versions.sorted { $0.key < $1.key })")
        XCTAssertGreaterThan(versions.filter { $0.key < 3 }.count, 0, "no kill landed mid-way: the test proves little")
        XCTAssertEqual(try dbcrypt(arguments, environment: keyEnvironment).status, 0)
        XCTAssertEqual(try schemaVersion(path), 3)
    }

    /// The version the database is at, after checking that its schema and
    /// rows are exactly those of that version (which rolls back a
    /// transaction the kill interrupted).
    private func schemaVersion(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let db = try Database(path: path, key: key)
        defer { db.close() }
        XCTAssertEqual(try db.fetchScalar(String.self, "PRAGMA quick_check"), "ok", file: file, line: line)
        let version = try db.fetchScalar(Int.self, "PRAGMA user_version") ?? -1
        let names = Set(try db.fetchAll(String.self, "SELECT name FROM sqlite_master"))
        let recorded = names.contains("dbcrypt_migrations") ? try db.fetchScalar(Int.self, "SELECT count(*) FROM dbcrypt_migrations") : 0
        XCTAssertEqual(recorded, version, "user_version and the migration record disagree", file: file, line: line)
        XCTAssertEqual(names.contains("tag"), version >= 1, file: file, line: line)
        if version >= 1 { XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM tag"), Self.rows, file: file, line: line) }
        XCTAssertEqual(names.contains("tag_by_name"), version >= 2, file: file, line: line)
        let columns = try db.fetchAll("PRAGMA table_info(note)").map { row -> String in try row["name"] }
        XCTAssertEqual(columns.contains("archived"), version >= 3, file: file, line: line)
        if version >= 3 { XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT sum(archived) FROM note"), Self.rows / 2, file: file, line: line) }
        return version
    }

    // MARK: - The campaign

    /// Runs `arguments` uninterrupted once (timing it), then kills it at
    /// random moments, when its temporary file appears beside `target`, just
    /// before and right after the rename over `target`, and before the
    /// directory's sync after it. `state` checks the files after each kill
    /// and says what they hold; `restore` puts the original back.
    private func campaign(arguments: [String], target: String, restore: () throws -> Void, state: () throws -> KillOutcome) throws {
        let folder = (target as NSString).deletingLastPathComponent
        let temporary = "." + (target as NSString).lastPathComponent + ".dbcrypt-"
        let command = KillTarget(dbcryptPath, arguments, environment: keyEnvironment)
        try restore()
        let started = Date()
        let run = try dbcrypt(arguments, environment: keyEnvironment)
        let duration = Date().timeIntervalSince(started)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try state(), KillOutcome.replaced)
        try restore()
        let syncs = try command.fsyncsBeforeFirstRename()
        try restore()

        let points: [(KillPoint, expected: KillOutcome?)] =
            Array(repeating: (.random, nil), count: KillCampaign.kills(quick: 2, full: 10))
            + Array(repeating: (.fileAppears(directory: folder, prefix: temporary), .original), count: KillCampaign.kills(quick: 1, full: 3))
            + Array(repeating: (.beforeRename, .original), count: KillCampaign.kills(quick: 1, full: 1))
            + Array(repeating: (.pathReplaced(target), .replaced), count: KillCampaign.kills(quick: 1, full: 3))
            + Array(repeating: (.beforeSyscall("fsync", occurrence: syncs + 1), .replaced), count: KillCampaign.kills(quick: 1, full: 1))
        let tally = try killAtEach(points, typicalDuration: duration, target: command, state: state, restore: restore)
        print("\(arguments[0]): \(points.count) kills within \(Int(duration * 1000)) ms runs: "
              + "\(tally[.original]!) left the original, \(tally[.replaced]!) the new file")
        XCTAssertGreaterThan(tally[.original]!, 0)
        XCTAssertGreaterThan(tally[.replaced]!, 0)

        // The next run removes what the killed ones left behind.
        XCTAssertEqual(try dbcrypt(arguments, environment: keyEnvironment).status, 0)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(temporary) }
        XCTAssertEqual(left, [], "temporary files left behind")
    }

    // MARK: - Files

    /// What an export must keep, after an integrity check: schema,
    /// user_version, and aggregates over every row.
    private func fingerprint(_ path: String, key: DatabaseKey?, options: Database.Options = Database.Options(),
                             file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        var options = options
        options.readOnly = true
        let db = try Database(path: path, key: key, options: options)
        defer { db.close() }
        XCTAssertEqual(try db.fetchScalar(String.self, "PRAGMA quick_check"), "ok", file: file, line: line)
        var lines = try db.fetchAll(String.self, "SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master ORDER BY name")
        lines.append("user_version \(try db.fetchScalar(Int.self, "PRAGMA user_version") ?? -1)")
        for sql in ["SELECT count(*), sum(length(title)), sum(length(body)), total(score), max(id) FROM note",
                    "SELECT count(*), group_concat(name) FROM author"] {
            let row = try db.fetchOne(sql)!
            lines.append((0..<row.count).map { "\(row[$0])" }.joined(separator: " "))
        }
        return lines
    }

    /// Copies `source` (encrypted with `key` when given) to `path` with its
    /// last rows committed only to a WAL.
    private func makeWALCopy(of source: String, at path: String, key: DatabaseKey? = nil) throws {
        let building = path + ".building"
        if let key {
            try DatabaseEncryption.encrypt(source, to: building, key: key)
        } else {
            try copy(source, to: building)
        }
        var options = Database.Options()
        options.journalMode = .wal
        let db = try Database(path: building, key: key, options: options)
        try db.execute("UPDATE note SET title = title || ' (edited)' WHERE id % 3 = 0; INSERT INTO author(name) VALUES ('only in the WAL')")
        // Copied while the writer is open: the copy's frames are not checkpointed.
        try copy(building, to: path)
        try copy(building + "-wal", to: path + "-wal")
        db.close()
        try FileManager.default.removeItem(atPath: building)
        XCTAssertGreaterThan(fileSize(path + "-wal"), 0)
    }
}

/// Replaces whatever is at `path` with a copy of `source`.
private func copy(_ source: String, to path: String) throws {
    try? FileManager.default.removeItem(atPath: path)
    try FileManager.default.copyItem(atPath: source, toPath: path)
}

/// The size of the file at `path`, 0 when there is none.
private func fileSize(_ path: String) -> Int {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
}
