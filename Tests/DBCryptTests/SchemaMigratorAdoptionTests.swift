import Foundation
import XCTest
@testable import DBCrypt

/// The migrator with foreign keys on, on a database that versioned its
/// schema by hand, on a `Database`, and with a migration that cannot run in
/// a transaction.
final class SchemaMigratorAdoptionTests: XCTestCase {
    var path: String!

    override func setUpWithError() throws {
        path = try makeTemporaryDirectory(self).appendingPathComponent("app.db").path
    }

    private func open() throws -> Database {
        var options = Database.Options()
        options.cipher = CipherSettings(.sqlcipher4, kdfIterations: 4000)
        let db = try Database(path: path, key: .named("adoption"), options: options)
        try db.execute("PRAGMA foreign_keys = ON")
        return db
    }

    private func parentAndChildren() -> SchemaMigrator {
        var migrator = SchemaMigrator()
        migrator.registerMigration(1, "parent_and_children") { db in
            try db.execute("""
                CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT);
                CREATE TABLE tag(note_id INTEGER NOT NULL REFERENCES note(id) ON DELETE CASCADE, name TEXT);
                INSERT INTO note VALUES (1, 'first');
                INSERT INTO tag VALUES (1, 'a'), (1, 'b');
                """)
        }
        return migrator
    }

    func testATableRebuildDoesNotCascadeDeleteChildRows() throws {
        let db = try open()
        var migrator = parentAndChildren()
        // SQLite's documented way to change a table: new table, copy, drop, rename.
        migrator.registerMigration(2, "rebuild_note") { db in
            try db.execute("""
                CREATE TABLE new_note(id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT '');
                INSERT INTO new_note SELECT id, coalesce(title, '') FROM note;
                DROP TABLE note;
                ALTER TABLE new_note RENAME TO note;
                """)
        }
        XCTAssertEqual(try migrator.migrate(db).count, 2)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM tag"), 2)
        XCTAssertEqual(try db.fetchScalar(Bool.self, "PRAGMA foreign_keys"), true, "enforcement is back on")
    }

    func testAMigrationThatBreaksAForeignKeyIsRolledBack() throws {
        let db = try open()
        var migrator = parentAndChildren()
        migrator.registerMigration(2, "orphan") { db in try db.execute("INSERT INTO tag VALUES (99, 'orphan')") }
        XCTAssertThrowsError(try migrator.migrate(db)) { error in
            guard case let .failed(number, _, message)? = error as? SchemaMigrationError else { return XCTFail("got \(error)") }
            XCTAssertEqual(number, 2)
            XCTAssertTrue(message.contains("tag") && message.contains("note"), message)
        }
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM tag"), 2)
        XCTAssertEqual(try db.fetchScalar(Int.self, "PRAGMA user_version"), 1)
        XCTAssertEqual(try db.fetchScalar(Bool.self, "PRAGMA foreign_keys"), true)
    }

    func testADatabaseVersionedByHandAdoptsTheMigrator() throws {
        let db = try open()
        // The app's schema before the migrator: made by hand, user_version 1.
        try db.execute("CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT); INSERT INTO note VALUES (1, 'kept'); PRAGMA user_version = 1")
        var migrator = SchemaMigrator()
        migrator.registerMigration(1, "create_note") { db in try db.execute("CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT)") }
        migrator.registerMigration(2, "add_body") { db in try db.execute("ALTER TABLE note ADD COLUMN body TEXT") }
        // Without a baseline, migration 1 runs again and fails on the existing table.
        XCTAssertThrowsError(try migrator.migrate(db))
        migrator.baselineFromUserVersion = true
        XCTAssertEqual(try migrator.migrate(db).map(\.number), [2])
        XCTAssertEqual(try migrator.status(db).map { $0.appliedAt != nil }, [true, true])
        XCTAssertEqual(try db.fetchScalar(String.self, "SELECT title FROM note"), "kept")
        XCTAssertEqual(try db.fetchScalar(Int.self, "PRAGMA user_version"), 2)
        XCTAssertEqual(try migrator.migrate(db).count, 0)
        // A hand-made version past every migration is refused.
        try db.execute("DROP TABLE \(SchemaMigrator.table); PRAGMA user_version = 7")
        XCTAssertThrowsError(try migrator.migrate(db)) { error in
            XCTAssertEqual(error as? SchemaMigrationError, .databaseIsNewer(appliedUpTo: 7, knownUpTo: 2))
        }
    }

    func testAMigrationCanRunOutsideATransaction() throws {
        let dir = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("Migrations")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Data("CREATE TABLE big(x); INSERT INTO big VALUES (randomblob(100000)); DROP TABLE big;".utf8)
            .write(to: dir.appendingPathComponent("0001_churn.sql"))
        try Data("\(SchemaMigrator.noTransactionMarker)\nVACUUM;\n".utf8).write(to: dir.appendingPathComponent("0002_vacuum.sql"))
        var migrator = SchemaMigrator()
        try migrator.loadDirectory(dir.path)
        migrator.registerMigration(3, "wal", inTransaction: false) { db in try db.execute("PRAGMA journal_mode = WAL") }
        XCTAssertEqual(migrator.migrations.map(\.inTransaction), [true, false, false])
        let queue = try DatabaseQueue(path: path, key: .named("adoption"))
        let sizeBefore = try queue.inDatabase { db in
            try db.execute("CREATE TABLE keep(x); INSERT INTO keep VALUES (1)")
            return try db.fetchScalar(Int.self, "PRAGMA page_count") ?? 0
        }
        XCTAssertEqual(try migrator.migrate(queue).count, 3)
        try queue.inDatabase { db in
            XCTAssertLessThanOrEqual(try db.fetchScalar(Int.self, "PRAGMA page_count") ?? .max, sizeBefore + 1, "VACUUM ran")
            XCTAssertEqual(try db.fetchScalar(String.self, "PRAGMA journal_mode"), "wal")
            XCTAssertEqual(try db.fetchScalar(Int.self, "PRAGMA user_version"), 3)
        }
    }

    func testMigratingInsideATransactionIsRefusedBeforeAnythingChanges() throws {
        let db = try open()
        let migrator = parentAndChildren()
        XCTAssertThrowsError(try db.inTransaction { db in try migrator.migrate(db) }) { error in
            XCTAssertEqual(error as? SchemaMigrationError, .insideTransaction)
        }
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM sqlite_master"), 0)
    }
}
