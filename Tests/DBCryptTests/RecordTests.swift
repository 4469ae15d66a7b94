import Foundation
import XCTest
@testable import DBCrypt

/// A record with an `INTEGER PRIMARY KEY` and snake-case columns.
private struct Player: Record, Equatable {
    static let databaseTableName = "player"
    static let databaseColumnNaming = ColumnNaming.snakeCase
    var id: Int64?
    var displayName: String
    var score: Int
    var teamID: Int?
    mutating func didInsert(rowID: Int64) { id = rowID }
}

/// A record keyed by two columns, its names as they are.
private struct Membership: Record, Equatable {
    static let databasePrimaryKey = ["teamId", "playerId"]
    var teamId: Int
    var playerId: Int
    var role: String
}

/// A record keyed by the rowid of a table without an `INTEGER PRIMARY KEY`.
private struct Note: Record, Equatable {
    static let databaseTableName = "note"
    static let databasePrimaryKey = ["rowid"]
    var rowid: Int64?
    var title: String
    mutating func didInsert(rowID: Int64) { rowid = rowID }
}

/// A record whose `encode(to:)` writes its note only when there is one,
/// and its columns in another order when it is flagged.
private struct Reading: Record, Equatable {
    var id: Int
    var value: Double
    var note: String?
    var flagged = false
    enum CodingKeys: String, CodingKey { case id, value, note, flagged }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if flagged { try container.encode(flagged, forKey: .flagged) }
        try container.encode(id, forKey: .id)
        try container.encode(value, forKey: .value)
        if let note { try container.encode(note, forKey: .note) }
        if !flagged { try container.encode(flagged, forKey: .flagged) }
    }
}

/// A record whose `encode(to:)` inserts another record of its type: the
/// outer insert's statement must not be lent to the inner one.
private struct Echo: Record {
    nonisolated(unsafe) static var db: Database?
    var id: Int
    var text: String

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        if id < 100, let db = Self.db { _ = try Echo(id: id + 100, text: "inner").inserted(db) }
        try container.encode(text, forKey: .text)
    }
}

final class RecordTests: XCTestCase {
    private func makeDatabase() throws -> Database {
        try TestFixtures.makeDatabase(self, "records.db", schema: """
            CREATE TABLE player(id INTEGER PRIMARY KEY, display_name TEXT NOT NULL UNIQUE, score INTEGER NOT NULL, team_id INTEGER);
            CREATE TABLE Membership(teamId INTEGER NOT NULL, playerId INTEGER NOT NULL, role TEXT NOT NULL,
                                    PRIMARY KEY(teamId, playerId)) WITHOUT ROWID;
            CREATE TABLE note(title TEXT NOT NULL);
            CREATE TABLE Echo(id INTEGER PRIMARY KEY, text TEXT NOT NULL);
            CREATE TABLE Reading(id INTEGER PRIMARY KEY, value REAL NOT NULL, note TEXT DEFAULT 'none', flagged INTEGER NOT NULL);
            """)
    }

    func testARecordWhoseEncodingInsertsAnotherRecordOfItsTypeKeepsItsOwnValues() throws {
        let db = try makeDatabase()
        Echo.db = db
        defer { Echo.db = nil }
        for id in 1...3 { _ = try Echo(id: id, text: "outer").inserted(db) }
        XCTAssertEqual(try db.fetchAll(String.self, "SELECT id || ' ' || text FROM Echo ORDER BY id"),
                       ["1 outer", "2 outer", "3 outer", "101 inner", "102 inner", "103 inner"])
    }

    func testARecordThatEncodesOtherColumnsFromOneInsertToTheNextIsInsertedAsItEncodes() throws {
        // Inserts bind values as they are encoded, expecting the columns of
        // the type's last record: every change of shape must be noticed.
        let db = try makeDatabase()
        let readings = [
            Reading(id: 1, value: 1.5, note: "first"), Reading(id: 2, value: 2.5, note: nil),
            Reading(id: 3, value: 3.5, note: "third"), Reading(id: 4, value: 4.5, note: "flagged", flagged: true),
            Reading(id: 5, value: 5.5, note: "fifth"), Reading(id: 6, value: 6.5, note: nil, flagged: true),
        ]
        for reading in readings { try reading.inserted(db) }
        XCTAssertEqual(try db.fetchAll(String.self, "SELECT note FROM Reading ORDER BY id"), ["first", "none", "third", "flagged", "fifth", "none"])
        XCTAssertEqual(try db.fetchAll(Int.self, "SELECT flagged FROM Reading ORDER BY id"), [0, 0, 0, 1, 0, 1])
        XCTAssertEqual(try db.fetchAll(Double.self, "SELECT value FROM Reading ORDER BY id"), [1.5, 2.5, 3.5, 4.5, 5.5, 6.5])

        // Another database, without the column the last record wrote: its INSERT does not prepare there.
        let other = try TestFixtures.makeDatabase(self, "other.db", schema: "CREATE TABLE Reading(id INTEGER PRIMARY KEY, value REAL, flagged INTEGER)")
        _ = try Reading(id: 7, value: 7.5, note: "seventh").inserted(db)
        _ = try Reading(id: 8, value: 8.5, note: nil).inserted(other)
        XCTAssertEqual(try other.fetchAll(Double.self, "SELECT value FROM Reading"), [8.5])
    }

    func testInsertHandsTheRowIDBackAndFetchReadsTheRecord() throws {
        let db = try makeDatabase()
        var ada = Player(id: nil, displayName: "Ada", score: 10, teamID: nil)
        try ada.insert(db)
        XCTAssertEqual(ada.id, 1)
        let grace = try Player(id: nil, displayName: "Grace", score: 7, teamID: 3).inserted(db)
        XCTAssertEqual(grace.id, 2)
        XCTAssertEqual(try Player.fetchOne(db, key: 1), ada)
        XCTAssertEqual(try Player.fetchOne(db, key: 2), grace)
        XCTAssertNil(try Player.fetchOne(db, key: 3))
        XCTAssertEqual(try Player.fetchAll(db).sorted { $0.id! < $1.id! }, [ada, grace])
        XCTAssertEqual(try Player.fetchAll(db, keys: [2, 9]), [grace])
        XCTAssertEqual(try Player.fetchAll(db, where: "score > ?", [8]), [ada])
        // A cursor reads the records one at a time, with the type's naming (snake case).
        XCTAssertEqual(try Player.fetchCursor(db).map { $0 }.sorted { $0.id! < $1.id! }, [ada, grace])
        let cursor = try Player.fetchCursor(db, where: "team_id = ?", [3])
        XCTAssertEqual(try cursor.next(), grace)
        XCTAssertNil(try cursor.next())
        XCTAssertEqual(try Player.fetchCount(db), 2)
        // Snake case both ways: the columns are display_name and team_id.
        XCTAssertEqual(try db.fetchScalar(String.self, "SELECT display_name FROM player WHERE team_id = 3"), "Grace")
        XCTAssertTrue(try ada.exists(db))
        XCTAssertFalse(try Player(id: 99, displayName: "-", score: 0).exists(db))
    }

    func testUpdateWritesEveryColumnAndUpdateChangesOnlyTheChangedOnes() throws {
        let db = try makeDatabase()
        var ada = try Player(id: nil, displayName: "Ada", score: 10, teamID: 4).inserted(db)
        ada.score = 11
        ada.teamID = nil   // a nil optional is written as NULL, not left out
        try ada.update(db)
        XCTAssertEqual(try Player.fetchOne(db, key: ada.id!), ada)
        XCTAssertNil(try db.fetchScalar(Int.self, "SELECT team_id FROM player"))

        // Only the changed column is written: another writer's change to the name survives.
        try db.execute("UPDATE player SET display_name = 'Ada L.'")
        XCTAssertTrue(try ada.updateChanges(db) { $0.score = 12 })
        XCTAssertEqual(ada.score, 12)
        XCTAssertEqual(try Player.fetchOne(db, key: ada.id!)?.displayName, "Ada L.")
        XCTAssertFalse(try ada.updateChanges(db) { $0.score = 12 })
        let old = ada
        ada.teamID = 5
        XCTAssertTrue(try ada.updateChanges(db, from: old))
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT team_id FROM player"), 5)

        try Player(id: ada.id, displayName: "ignored", score: 99).update(db, columns: ["score"])
        XCTAssertEqual(try Player.fetchOne(db, key: ada.id!)?.score, 99)
        XCTAssertEqual(try Player.fetchOne(db, key: ada.id!)?.displayName, "Ada L.")
    }

    func testUpsertKeepsTheRowIDAndFiresNoDelete() throws {
        let db = try makeDatabase()
        // INSERT OR REPLACE would delete the old row: the trigger would see
        // it (with recursive triggers on) and the cascade would take the child row.
        try db.execute("""
            PRAGMA recursive_triggers = ON; PRAGMA foreign_keys = ON;
            CREATE TABLE deletion(id INTEGER);
            CREATE TRIGGER player_deleted AFTER DELETE ON player BEGIN INSERT INTO deletion VALUES (old.id); END;
            CREATE TABLE award(player_id INTEGER REFERENCES player(id) ON DELETE CASCADE);
            """)
        var ada = Player(id: nil, displayName: "Ada", score: 1)
        try ada.upsert(db)             // no id: inserted
        XCTAssertEqual(ada.id, 1)
        try db.execute("INSERT INTO award VALUES (1)")
        ada.score = 2
        try ada.upsert(db)             // existing id: updated in place
        var grace = Player(id: 40, displayName: "Grace", score: 3)
        try grace.upsert(db)           // an id no row has: inserted with it
        XCTAssertEqual(grace.id, 40)
        XCTAssertEqual(try Player.fetchAll(db).sorted { $0.id! < $1.id! }, [ada, grace])
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM deletion"), 0)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM award"), 1)

        var member = Membership(teamId: 1, playerId: 1, role: "captain")
        try member.upsert(db)
        member.role = "coach"
        try member.upsert(db)
        XCTAssertEqual(try Membership.fetchAll(db), [member])
    }

    /// The `ON CONFLICT` form for SQLite 3.24+, run by Python's sqlite3
    /// (the system's SQLite 3.40): the linked SQLite 3.15 cannot parse it.
    func testTheUpsertOfNewerSQLiteUpdatesInPlaceWithoutADelete() throws {
        let sql = RecordSQL(table: "player", keys: ["id", "displayName", "score", "teamID"], naming: .snakeCase,
                            primaryKey: ["id"], sqliteVersion: 3_040_001)
        let upsert = try XCTUnwrap(sql.nativeUpsert)
        XCTAssertNil(RecordSQL(table: "player", keys: ["id"], naming: .asIs, primaryKey: ["id"], sqliteVersion: 3_015_002).nativeUpsert)
        let path = try makeTemporaryDirectory(self).appendingPathComponent("upsert.db").path
        let printed = try runPythonSQLite(path, """
            db.executescript('''PRAGMA recursive_triggers = ON; PRAGMA foreign_keys = ON;
                CREATE TABLE player(id INTEGER PRIMARY KEY, display_name TEXT NOT NULL UNIQUE, score INTEGER NOT NULL, team_id INTEGER);
                CREATE TABLE deletion(id INTEGER);
                CREATE TRIGGER player_deleted AFTER DELETE ON player BEGIN INSERT INTO deletion VALUES (old.id); END;
                CREATE TABLE award(player_id INTEGER REFERENCES player(id) ON DELETE CASCADE);
                INSERT INTO player VALUES (1, 'Ada', 1, NULL); INSERT INTO award VALUES (1);''')
            db.execute(sys.argv[2], (1, 'Ada', 2, 7))
            db.execute(sys.argv[2], (2, 'Grace', 3, None))
            print(db.execute("SELECT group_concat(id || display_name || score || ifnull(team_id, '-')) FROM player").fetchone()[0],
                  db.execute('SELECT count(*) FROM deletion').fetchone()[0], db.execute('SELECT count(*) FROM award').fetchone()[0])
            """, arguments: [upsert])
        XCTAssertEqual(printed.trimmingCharacters(in: .whitespacesAndNewlines), "1Ada27,2Grace3- 0 1")
    }

    func testCompositeKeysAndTheHiddenRowID() throws {
        let db = try makeDatabase()
        let members = [Membership(teamId: 1, playerId: 7, role: "a"), Membership(teamId: 2, playerId: 7, role: "b")]
        for var member in members { try member.insert(db) }
        XCTAssertEqual(try Membership.fetchOne(db, key: ["teamId": 2, "playerId": 7]), members[1])
        XCTAssertNil(try Membership.fetchOne(db, key: ["teamId": 3, "playerId": 7]))
        XCTAssertEqual(try Membership.fetchAll(db, keys: [["teamId": 1, "playerId": 7], ["playerId": 7, "teamId": 2]])
            .sorted { $0.teamId < $1.teamId }, members)
        XCTAssertTrue(try members[0].delete(db))
        XCTAssertFalse(try members[0].delete(db))
        XCTAssertEqual(try Membership.fetchCount(db), 1)

        var note = Note(rowid: nil, title: "first")
        try note.insert(db)
        XCTAssertEqual(note.rowid, 1)
        note.title = "renamed"
        try note.update(db)
        XCTAssertEqual(try Note.fetchOne(db, key: 1), note)
        XCTAssertTrue(try Note.deleteOne(db, key: 1))
        XCTAssertEqual(try Note.fetchCount(db), 0)
    }

    func testManyKeysAreFetchedInChunksThatSQLiteAccepts() throws {
        let db = try makeDatabase()
        try db.inTransaction { db in
            for i in 1...2_500 { _ = try Player(id: nil, displayName: "p\(i)", score: i).inserted(db) }
        }
        let fetched = try Player.fetchAll(db, keys: Array(1...2_500) + [0])
        XCTAssertEqual(Set(fetched.map(\.score)), Set(1...2_500))
        XCTAssertEqual(try Player.deleteAll(db), 2_500)
    }

    func testErrorsNameTheTableTheColumnAndTheSQL() throws {
        let db = try makeDatabase()
        // No primary key value where the row must be found by it.
        XCTAssertThrowsError(try Player(id: nil, displayName: "x", score: 1).update(db)) { error in
            guard case let DatabaseError.missingPrimaryKey(table, column, sql?) = error else { return XCTFail("\(error)") }
            XCTAssertEqual([table, column], ["player", "id"])
            XCTAssertTrue(sql.hasPrefix("UPDATE \"player\" SET"), sql)
        }
        XCTAssertThrowsError(try Player(id: nil, displayName: "x", score: 1).delete(db))
        // The row is gone.
        XCTAssertThrowsError(try Player(id: 5, displayName: "x", score: 1).update(db)) { error in
            guard case let DatabaseError.recordNotFound(table, sql?) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(table, "player")
            XCTAssertTrue(sql.contains("WHERE \"id\" = ?"), sql)
        }
        // A constraint: SQLite's extended code, its message names table.column, and the SQL.
        _ = try Player(id: nil, displayName: "Ada", score: 1).inserted(db)
        XCTAssertThrowsError(_ = try Player(id: nil, displayName: "Ada", score: 2).inserted(db)) { error in
            guard let error = error as? DatabaseError, case let .sqlite(_, message, sql?) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(error.extendedResultCode, 2067)   // SQLITE_CONSTRAINT_UNIQUE
            XCTAssertTrue(message.contains("player.display_name"), message)
            XCTAssertTrue(sql.hasPrefix("INSERT INTO \"player\""), sql)
        }
        // A property the table has no column for.
        struct Stray: Record {
            static let databaseTableName = "player"
            static let databaseColumnNaming = ColumnNaming.snakeCase
            var id: Int64?
            var displayName: String
            var score: Int
            var nickname: String
        }
        XCTAssertThrowsError(_ = try Stray(id: nil, displayName: "s", score: 1, nickname: "n").inserted(db)) { error in
            guard case let DatabaseError.sqlite(_, message, sql?) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("player") && message.contains("nickname"), message)
            XCTAssertTrue(sql.contains("\"nickname\""), sql)
        }
        // A value that does not decode.
        try db.execute("UPDATE player SET score = 'many'")
        XCTAssertThrowsError(try Player.fetchAll(db)) { error in
            guard case let DatabaseError.typeMismatch(column, _, type, sql?) = error else { return XCTFail("\(error)") }
            XCTAssertEqual([column, type], ["score", "Int"])
            XCTAssertTrue(sql.contains("FROM \"player\""), sql)
        }
        // A key of the wrong shape.
        XCTAssertThrowsError(try Membership.fetchOne(db, key: 1)) { error in
            guard case DatabaseError.invalidArguments = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try Membership.fetchOne(db, key: ["teamId": 1])) { error in
            guard case DatabaseError.invalidArguments = error else { return XCTFail("\(error)") }
        }
    }

    func testRecordsWorkInsideAQueueAndAPoolOnAnEncryptedFile() throws {
        let directory = try makeTemporaryDirectory(self)
        let key = try DatabaseKey(rawKey: [UInt8](repeating: 3, count: 32))
        let schema = "CREATE TABLE player(id INTEGER PRIMARY KEY, display_name TEXT NOT NULL UNIQUE, score INTEGER NOT NULL, team_id INTEGER)"
        let queue = try DatabaseQueue(path: directory.appendingPathComponent("q.db").path, key: key)
        try queue.write { db in try db.execute(schema) }
        let inserted = try queue.write { db in try Player(id: nil, displayName: "Ada", score: 1).inserted(db) }
        XCTAssertEqual(try queue.read { db in try Player.fetchOne(db, key: inserted.id!) }, inserted)

        let poolPath = directory.appendingPathComponent("p.db").path
        let pool = try DatabasePool(path: poolPath, key: key)
        try pool.write { db in try db.execute(schema) }
        // A failing record rolls back the whole write closure.
        XCTAssertThrowsError(try pool.write { db in
            _ = try Player(id: nil, displayName: "Ada", score: 1).inserted(db)
            _ = try Player(id: nil, displayName: "Ada", score: 2).inserted(db)
        })
        XCTAssertEqual(try pool.read { db in try Player.fetchCount(db) }, 0)
        try pool.write { db in _ = try Player(id: nil, displayName: "Grace", score: 2).inserted(db) }
        XCTAssertEqual(try pool.read { db in try Player.fetchAll(db).map(\.displayName) }, ["Grace"])
        try pool.close()
        XCTAssertFalse(try file(poolPath, contains: "Grace"))
    }
}
