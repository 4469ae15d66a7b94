import Foundation
import XCTest
@testable import DBCrypt

/// Schema migrations from files and code, and every refusal leaving the file untouched.
final class SchemaMigratorTests: XCTestCase {
    let key = DatabaseKey.named("migrations key")
    var dir: URL!
    var migrations: URL!
    var path: String!

    override func setUpWithError() throws {
        dir = try makeTemporaryDirectory(self)
        migrations = dir.appendingPathComponent("Migrations")
        try FileManager.default.createDirectory(at: migrations, withIntermediateDirectories: false)
        path = dir.appendingPathComponent("app.db").path
        try write("0001_create_note.sql", "CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT NOT NULL);")
        try write("0002_add_tag.sql", "CREATE TABLE tag(note_id INTEGER REFERENCES note(id), name TEXT);\nCREATE INDEX tag_by_note ON tag(note_id);")
        try write("README.md", "not a migration")
    }

    private func write(_ file: String, _ sql: String) throws {
        try Data(sql.utf8).write(to: migrations.appendingPathComponent(file))
    }

    private func migrator() throws -> SchemaMigrator {
        var migrator = SchemaMigrator()
        try migrator.loadDirectory(migrations.path)
        return migrator
    }

    private func queue() throws -> DatabaseQueue {
        var options = Database.Options()
        options.cipher = CipherSettings(.sqlcipher4, kdfIterations: 4000)
        return try DatabaseQueue(path: path, key: key, options: options)
    }

    private func bytes() throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    func testFreshDatabaseReachesTheLatestVersionAndRunningAgainChangesNothing() throws {
        let applied = try migrator().migrate(try queue())
        XCTAssertEqual(applied.map(\.source), ["0001_create_note.sql", "0002_add_tag.sql"])
        let db = try queue()
        XCTAssertEqual(try db.inDatabase { try $0.fetchScalar(Int.self, "PRAGMA user_version") }, 2)
        XCTAssertEqual(try db.inDatabase { try $0.fetchAll(String.self, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") },
                       ["dbcrypt_migrations", "note", "tag"])
        XCTAssertEqual(try migrator().status(db).map { $0.appliedAt != nil }, [true, true])
        try db.close()

        let before = try bytes()
        XCTAssertEqual(try migrator().migrate(try queue()).count, 0)
        XCTAssertEqual(try bytes(), before)
    }

    func testAddingAFileAppliesOnlyIt() throws {
        try migrator().migrate(try queue())
        try write("0003_add_note_body.sql", "ALTER TABLE note ADD COLUMN body TEXT;")
        let applied = try migrator().migrate(try queue())
        XCTAssertEqual(applied.map(\.number), [3])
        XCTAssertEqual(try queue().inDatabase { try $0.fetchScalar(Int.self, "PRAGMA user_version") }, 3)
        XCTAssertEqual(try migrator().status(try queue()).map(\.number), [1, 2, 3])
    }

    func testUpToStopsEarly() throws {
        XCTAssertEqual(try migrator().migrate(try queue(), upTo: 1).map(\.number), [1])
        XCTAssertEqual(try migrator().status(try queue()).map { $0.appliedAt == nil }, [false, true])
        XCTAssertEqual(try queue().inDatabase { try $0.fetchScalar(Int.self, "PRAGMA user_version") }, 1)
    }

    func testEachRefusalLeavesTheDatabaseByteIdentical() throws {
        try migrator().migrate(try queue())
        let before = try bytes()
        let original1 = try String(contentsOf: migrations.appendingPathComponent("0001_create_note.sql"), encoding: .utf8)
        let refusals: [(String, () throws -> Void, SchemaMigrationError)] = [
            ("changed", { try self.write("0001_create_note.sql", original1 + "\n-- edited") },
             .appliedMigrationChanged(1, name: "0001_create_note.sql")),
            ("gone", { try FileManager.default.removeItem(at: self.migrations.appendingPathComponent("0001_create_note.sql")) },
             .appliedMigrationMissing(1, name: "create_note")),
            ("duplicate", { try self.write("0003_one.sql", "SELECT 1;"); try self.write("0003_two.sql", "SELECT 2;") },
             .duplicateNumber(3, first: "0003_one.sql", second: "0003_two.sql")),
            ("misnamed", { try self.write("add-things.sql", "SELECT 1;") }, .invalidFileName(file: "add-things.sql")),
            ("newer", { try FileManager.default.removeItem(at: self.migrations.appendingPathComponent("0002_add_tag.sql")) },
             .databaseIsNewer(appliedUpTo: 2, knownUpTo: 1)),
        ]
        let pristine = try FileManager.default.contentsOfDirectory(atPath: migrations.path)
        for (label, damage, expected) in refusals {
            // Put the directory back as it was, then damage it one way.
            for file in try FileManager.default.contentsOfDirectory(atPath: migrations.path) where !pristine.contains(file) {
                try FileManager.default.removeItem(at: migrations.appendingPathComponent(file))
            }
            try write("0001_create_note.sql", original1)
            try write("0002_add_tag.sql", "CREATE TABLE tag(note_id INTEGER REFERENCES note(id), name TEXT);\nCREATE INDEX tag_by_note ON tag(note_id);")
            try damage()
            XCTAssertThrowsError(try migrator().migrate(try queue()), label) { error in
                XCTAssertEqual(error as? SchemaMigrationError, expected, label)
                XCTAssertTrue("\(error)".count > 20)
            }
            XCTAssertThrowsError(try migrator().status(try queue()), label)
            XCTAssertEqual(try bytes(), before, "\(label) changed the database")
        }
    }

    func testFailingMigrationRollsBackAloneAndIsNamed() throws {
        try write("0003_add_archive.sql", "CREATE TABLE archive(x); INSERT INTO nowhere VALUES (1);")
        try write("0004_later.sql", "CREATE TABLE later(x);")
        XCTAssertThrowsError(try migrator().migrate(try queue())) { error in
            guard case let .failed(number, name, message)? = error as? SchemaMigrationError else { return XCTFail("got \(error)") }
            XCTAssertEqual(number, 3)
            XCTAssertEqual(name, "add_archive")
            XCTAssertTrue(message.contains("no such table: nowhere"), message)
            XCTAssertTrue("\(error)".contains("Migration 3 (add_archive) failed"))
        }
        let db = try queue()
        XCTAssertEqual(try db.inDatabase { try $0.fetchScalar(Int.self, "PRAGMA user_version") }, 2)
        XCTAssertEqual(try db.inDatabase { try $0.fetchScalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name IN ('archive', 'later')") }, 0)
        XCTAssertEqual(try migrator().status(db).map { $0.appliedAt != nil }, [true, true, false, false])
    }

    func testCodeAndFileMigrationsMixInOneOrder() throws {
        var migrator = try migrator()
        migrator.registerMigration(3, "seed_notes", checksum: "v1") { db in
            try db.execute("INSERT INTO note(title) VALUES ('first'), ('second')")
        }
        try write("0004_add_pinned.sql", "ALTER TABLE note ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;")
        try migrator.loadDirectory(migrations.path)   // loads 0001-0002 again: duplicates
        XCTAssertThrowsError(try migrator.migrate(try queue())) { error in
            XCTAssertEqual(error as? SchemaMigrationError, .duplicateNumber(1, first: "0001_create_note.sql", second: "0001_create_note.sql"))
        }

        var mixed = SchemaMigrator()
        mixed.registerMigration(3, "seed_notes", checksum: "v1") { db in
            try db.execute("INSERT INTO note(title) VALUES ('first'), ('second')")
        }
        try mixed.loadDirectory(migrations.path)
        XCTAssertEqual(mixed.migrations.map(\.number), [1, 2, 3, 4])
        XCTAssertEqual(try mixed.migrate(try queue()).map(\.source), ["0001_create_note.sql", "0002_add_tag.sql", "code", "0004_add_pinned.sql"])
        XCTAssertEqual(try queue().inDatabase { try $0.fetchScalar(Int.self, "SELECT count(*) FROM note WHERE pinned = 0") }, 2)

        // A code migration whose checksum changes counts as edited.
        var edited = SchemaMigrator()
        edited.registerMigration(3, "seed_notes", checksum: "v2") { _ in }
        try edited.loadDirectory(migrations.path)
        XCTAssertThrowsError(try edited.migrate(try queue())) { error in
            XCTAssertEqual(error as? SchemaMigrationError, .appliedMigrationChanged(3, name: "seed_notes"))
        }
    }

    func testPlaintextDatabasesMigrateToo() throws {
        let plain = try DatabaseQueue(path: dir.appendingPathComponent("plain.db").path)
        XCTAssertEqual(try migrator().migrate(plain).count, 2)
        XCTAssertEqual(try FileFormat.detect(at: dir.appendingPathComponent("plain.db").path), .plaintext(pageSize: 4096, userVersion: 2))
    }
}
