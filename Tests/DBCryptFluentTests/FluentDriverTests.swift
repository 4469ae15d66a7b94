#if Fluent
import DBCrypt
@testable import DBCryptFluent
import DBCryptSQLKit
import FluentKit
import Foundation
import Logging
import NIOPosix
import SQLKit
import Synchronization
import TestFixtures
import XCTest

/// The Fluent driver on a real encrypted pool: new ids, transactions under
/// contention, rollbacks, misuse, errors as Fluent's, a wrong key at the
/// first use, how values are stored, and logs without bound values.
final class FluentDriverTests: XCTestCase {
    private var directory: URL!
    private var path: String { directory.appendingPathComponent("app.db").path }
    private var databases: Databases!
    private var db: (any FluentKit.Database)!

    override func setUp() async throws {
        directory = try makeTemporaryDirectory(self)
        db = try await open(key: TestKeys.key)
        try await CreateNote().prepare(on: db)
    }

    override func tearDown() async throws {
        await databases?.shutdownAsync()
        databases = nil
    }

    private func open(key: DatabaseKey, logger: Logger = Logger(label: "FluentDriverTests")) async throws -> any FluentKit.Database {
        await databases?.shutdownAsync()
        databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
        databases.use(.dbcrypt(path: path, key: key), as: .dbcrypt)
        return databases.database(.dbcrypt, logger: logger, on: MultiThreadedEventLoopGroup.singleton.any())!
    }

    /// Each new row's id is its own, concurrent inserts or not: RETURNING
    /// on SQLite 3.35 and later, `last_insert_rowid()` of the inserting
    /// connection before.
    func testNewRowsGetTheirOwnIDs() async throws {
        let db = self.db!
        let ids = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for i in 0..<40 {
                group.addTask {
                    let note = Note(title: "note \(i)")
                    try await note.create(on: db)
                    return (try XCTUnwrap(note.id), note.title)
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        XCTAssertEqual(ids.count, 40)
        for (id, title) in ids {
            let found = try await Note.find(id, on: db)
            XCTAssertEqual(found?.title, title)
        }
    }

    /// 100 tasks each read a counter and write it back plus one, in
    /// transactions that await between the two: none waits forever, no
    /// update is lost.
    func testConcurrentTransactionsNeitherDeadlockNorLoseAnUpdate() async throws {
        let db = self.db!
        let counter = Note(title: "counter")
        try await counter.create(on: db)
        let id = try XCTUnwrap(counter.id)
        let finished = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await withThrowingTaskGroup(of: Void.self) { transactions in
                    for _ in 0..<100 {
                        transactions.addTask {
                            try await db.transaction { tx in
                                let found = try await Note.find(id, on: tx)
                                let note = try XCTUnwrap(found)
                                await Task.yield()
                                note.count += 1
                                try await note.save(on: tx)
                            }
                        }
                    }
                    try await transactions.waitForAll()
                }
                return true
            }
            // The watchdog: a deadlock fails the test instead of hanging it.
            group.addTask {
                _ = await waitUntil(timeout: 120) { Task.isCancelled }
                return false
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
        XCTAssertTrue(finished, "100 concurrent transactions did not finish within 120 s")
        let count = try await Note.find(id, on: db)?.count
        XCTAssertEqual(count, 100)
    }

    func testAThrowingOrCancelledTransactionRollsBack() async throws {
        struct Refused: Error {}
        let db = self.db!
        do {
            try await db.transaction { tx in
                try await Note(title: "thrown away").create(on: tx)
                throw Refused()
            }
            XCTFail("the error was not rethrown")
        } catch is Refused {}
        var count = try await Note.query(on: db).count()
        XCTAssertEqual(count, 0)

        // Fluent's own `transaction` (what `any Database` calls) runs the
        // closure in a task of its own; the driver's, on the concrete
        // database, is cancelled with the caller.
        let driverDatabase = try XCTUnwrap(db as? FluentDBCryptDatabase)
        let inserted = Flag()
        let task = Task {
            try await driverDatabase.transaction { tx in
                try await Note(title: "cancelled").create(on: tx)
                inserted.raise()
                while !Task.isCancelled { await Task.yield() }
            }
        }
        let didInsert = await waitUntil { inserted.isRaised }
        XCTAssertTrue(didInsert)
        task.cancel()
        do {
            try await task.value
            XCTFail("a cancelled transaction committed")
        } catch is CancellationError {}
        count = try await Note.query(on: db).count()
        XCTAssertEqual(count, 0)
    }

    /// A read outside the transaction, while it is open, sees the last
    /// commit; once it commits, its row.
    func testReadsDuringATransactionSeeTheLastCommit() async throws {
        let db = self.db!
        try await Note(title: "committed").create(on: db)
        try await db.transaction { tx in
            try await Note(title: "pending").create(on: tx)
            let seenInside = try await Note.query(on: tx).count()
            XCTAssertEqual(seenInside, 2)
            let seenOutside = try await Task.detached { try await Note.query(on: db).count() }.value
            XCTAssertEqual(seenOutside, 1)
        }
        let after = try await Note.query(on: db).count()
        XCTAssertEqual(after, 2)
    }

    func testWritingThroughThePoolInsideAFluentTransactionIsMisuse() async throws {
        let db = self.db!
        let pool = try XCTUnwrap(db.dbcryptPool)
        try await db.transaction { tx in
            do {
                try await pool.write { db in try db.execute("DELETE FROM notes") }
                XCTFail("a write through the pool from inside the transaction was accepted")
            } catch let DBCrypt.DatabaseError.misuse(reason) {
                XCTAssertTrue(reason.contains("Fluent transaction"), reason)
            }
            try await Note(title: "still usable").create(on: tx)
        }
        let count = try await Note.query(on: db).count()
        XCTAssertEqual(count, 1)
        // Outside the transaction, the pool writes.
        try await pool.write { db in try db.execute("DELETE FROM notes") }
    }

    func testErrorsAreFluentsDatabaseErrors() async throws {
        let db = self.db!
        try await Note(title: "unique").create(on: db)
        do {
            try await Note(title: "unique").create(on: db)
            XCTFail("a duplicate title was inserted")
        } catch let error as any FluentKit.DatabaseError {
            XCTAssertTrue(error.isConstraintFailure, "\(error)")
            XCTAssertFalse(error.isSyntaxError)
            XCTAssertFalse(error.isConnectionClosed)
        }
        let sql = try XCTUnwrap(db as? any SQLDatabase)
        do {
            try await sql.raw("asdf").run()
            XCTFail("no error")
        } catch let error as any FluentKit.DatabaseError {
            XCTAssertTrue(error.isSyntaxError, "\(error)")
            XCTAssertFalse(error.isConstraintFailure)
        }
    }

    /// The first use with a wrong key fails with the error that names the
    /// file (an app that migrates at start refuses to start), and so does
    /// every later one.
    func testAWrongKeyFailsTheFirstUseAndNamesTheFile() async throws {
        let db = try await open(key: .named("not the key"))
        for _ in 0..<2 {
            do {
                _ = try await Note.query(on: db).count()
                XCTFail("a wrong key opened the database")
            } catch let error as DBCrypt.DatabaseError {
                XCTAssertEqual(error, .wrongKeyOrNotADatabase(path: path))
            }
        }
        XCTAssertNil(db.dbcryptPool)
    }

    /// Dates as REAL seconds since 1970, booleans as 0 or 1, UUIDs as text,
    /// nested values as JSON text: as Fluent's SQLite driver stores them.
    func testValuesAreStoredAsFluentsSQLiteDriverStoresThem() async throws {
        let db = self.db!
        try await CreateEvent().prepare(on: db)
        let event = Event()
        event.id = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        event.at = Date(timeIntervalSince1970: 1_700_000_000.25)
        event.done = true
        event.place = Place(city: "Lyon", floor: 3)
        event.kind = .meeting
        event.note = nil
        try await event.create(on: db)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path + "-wal"))
        // Shutdown closes the pool, which checkpoints: no log is left beside the file.
        await databases.shutdownAsync()
        databases = nil
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"))

        let raw = try DBCrypt.Database(path: path, key: TestKeys.key)
        let row = try XCTUnwrap(raw.fetchOne("SELECT id, typeof(id), at, typeof(at), done, typeof(done), place, kind, note FROM events"))
        XCTAssertEqual(row[0], .text("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        XCTAssertEqual(row[2], .real(1_700_000_000.25))
        XCTAssertEqual(row[4], .integer(1))
        XCTAssertEqual(row[7], .text("meeting"))
        XCTAssertEqual(row[8], .null)
        guard case .text(let json) = row[6] else { return XCTFail("the nested value is \(row[6]), not text") }
        XCTAssertEqual(try JSONDecoder().decode(Place.self, from: Data(json.utf8)), Place(city: "Lyon", floor: 3))
        raw.close()

        let reopened = try await open(key: TestKeys.key)
        let first = try await Event.query(on: reopened).first()
        let read = try XCTUnwrap(first)
        XCTAssertEqual(read.id, event.id)
        XCTAssertEqual(read.at, event.at)
        XCTAssertEqual(read.done, true)
        XCTAssertEqual(read.place, event.place)
        XCTAssertEqual(read.kind, EventKind.meeting)
        XCTAssertNil(read.note)
    }

    /// At trace level, with Fluent's own query logs and the driver's SQL:
    /// the SQL is there, no bound value is.
    func testNoBoundValueIsLogged() async throws {
        let lines = Collected<String>()
        var logger = Logger(label: "capture") { _ in CapturingLogHandler(lines: lines) }
        logger.logLevel = .trace
        let db = try await open(key: TestKeys.key, logger: logger)
        let secret = "secret-\(UUID().uuidString)"
        let note = Note(title: secret)
        try await note.create(on: db)
        note.count = 424_242
        try await note.save(on: db)
        _ = try await Note.query(on: db).filter(\.$title == secret).first()
        let sql = try XCTUnwrap(db as? any SQLDatabase)
        _ = try await sql.select().column("id").from("notes").where("title", .equal, secret).all()
        let text = lines.all.joined(separator: "\n")
        XCTAssertTrue(text.contains("INSERT INTO"), "the SQL was not logged at trace level")
        XCTAssertTrue(text.contains("Running query"), "Fluent's own query log was not seen")
        XCTAssertFalse(text.contains(secret), "a bound value was logged")
        XCTAssertFalse(text.contains("424242"), "a bound value was logged")
    }

    func testDroppingAColumnNeedsSQLite335() async throws {
        let db = self.db!
        do {
            try await db.schema("notes").deleteField("count").update()
            XCTAssertTrue(SQLiteVersion.linked.isAtLeast(3, 35), "SQLite \(SQLiteVersion.linked.stringValue) dropped a column")
            let columns = try await (db as! any SQLDatabase).raw("SELECT * FROM notes").all().first?.allColumns
            XCTAssertNil(columns?.first { $0 == "count" })
        } catch let error as UnsupportedSchemaChange {
            XCTAssertFalse(SQLiteVersion.linked.isAtLeast(3, 35))
            XCTAssertEqual("\(error)", "This schema change cannot be made: the linked SQLCipher's SQLite \(SQLiteVersion.linked.stringValue) cannot drop a column (SQLite has DROP COLUMN from 3.35).")
        }
    }
}

// MARK: - Models

final class Note: Model, @unchecked Sendable {
    static let schema = "notes"
    @ID(custom: "id", generatedBy: .database) var id: Int?
    @Field(key: "title") var title: String
    @Field(key: "count") var count: Int

    init() {}
    init(title: String) {
        self.title = title
        count = 0
    }
}

struct CreateNote: AsyncMigration {
    func prepare(on database: any FluentKit.Database) async throws {
        try await database.schema("notes")
            .field("id", .int, .identifier(auto: true))
            .field("title", .string, .required).unique(on: "title")
            .field("count", .int, .required)
            .create()
    }
    func revert(on database: any FluentKit.Database) async throws { try await database.schema("notes").delete() }
}

struct Place: Codable, Equatable {
    var city: String
    var floor: Int
}

enum EventKind: String, Codable { case meeting, call }

final class Event: Model, @unchecked Sendable {
    static let schema = "events"
    @ID(key: .id) var id: UUID?
    @Field(key: "at") var at: Date
    @Field(key: "done") var done: Bool
    @Field(key: "place") var place: Place
    @Enum(key: "kind") var kind: EventKind
    @OptionalField(key: "note") var note: String?
    init() {}
}

struct CreateEvent: AsyncMigration {
    func prepare(on database: any FluentKit.Database) async throws {
        try await database.schema("events").id()
            .field("at", .datetime, .required).field("done", .bool, .required).field("place", .json, .required)
            .field("kind", .string, .required).field("note", .string)
            .create()
    }
    func revert(on database: any FluentKit.Database) async throws { try await database.schema("events").delete() }
}

// MARK: - Helpers

/// Writes each message and its metadata to `lines`.
struct CapturingLogHandler: LogHandler {
    let lines: Collected<String>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        lines.append("\(event.level) \(event.message) \(metadata.merging(event.metadata ?? [:]) { $1 })")
    }
}
#endif
