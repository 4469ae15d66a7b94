// The database builders the tests share: a connection, a queue or a pool
// on a new file with a schema; the export fixture; a plaintext database.
import DBCrypt
import Foundation
import XCTest

/// A new connection on `path`, keyed with `key` (the raw test key unless
/// told), with `schema` run first.
public func makeDatabase(_ path: String, key: DatabaseKey? = TestKeys.key, options: Database.Options = Database.Options(),
                         schema: String = "") throws -> Database {
    let db = try Database(path: path, key: key, options: options)
    if !schema.isEmpty { try db.execute(schema) }
    return db
}

/// A new database `name` in a temporary directory of `test`, keyed with the
/// raw test key, with `schema` run first.
public func makeDatabase(_ test: XCTestCase, _ name: String, schema: String) throws -> Database {
    try makeDatabase(try makeTemporaryDirectory(test).appendingPathComponent(name).path, schema: schema)
}

/// A queue on `path`, keyed with `key`, with `schema` run in its first write.
public func makeQueue(_ path: String, key: DatabaseKey? = TestKeys.key, options: Database.Options = Database.Options(),
                      schema: String = "") throws -> DatabaseQueue {
    let queue = try DatabaseQueue(path: path, key: key, options: options)
    if !schema.isEmpty { try queue.write { db in try db.execute(schema) } }
    return queue
}

/// A pool on `path`, keyed with `key`, with `schema` run in its first write.
public func makePool(_ path: String, key: DatabaseKey = TestKeys.key, options: Database.Options = Database.Options(),
                     schema: String = "") throws -> DatabasePool {
    let pool = try DatabasePool(path: path, key: key, options: options)
    if !schema.isEmpty { try pool.write { db in try db.execute(schema) } }
    return pool
}

/// A plaintext database with two tables and `rows` notes.
public func makePlaintextDatabase(_ path: String, rows: Int = 200) throws {
    let db = try Database(path: path)
    try db.execute("""
        CREATE TABLE author(id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE note(id INTEGER PRIMARY KEY, author_id INTEGER, title TEXT, body BLOB, score REAL);
        INSERT INTO author(name) VALUES ('Ada'), ('Grace');
        PRAGMA user_version = 3;
        """)
    try db.inTransaction { db in
        for i in 0..<rows {
            try db.execute("INSERT INTO note(author_id, title, body, score) VALUES (?, ?, ?, ?)",
                           [i % 2 + 1, "title, \"quoted\" \(i)", Data([UInt8(i % 256), 0, 1]), Double(i) / 4])
        }
    }
    db.close()
}

/// A database with what an export can get wrong: several tables, an index, a
/// view, a trigger, an AUTOINCREMENT table, blobs, a rowid table without an
/// alias, `user_version` 7, an `application_id`, incremental auto-vacuum and
/// ANALYZE statistics.
public enum EncryptionFixture {
    public static let applicationID = 0x4442_4331

    /// Creates the fixture at `path`. With `walFrames`, the file is in WAL
    /// mode and its last writes are still in `path-wal`, not checkpointed.
    public static func create(at path: String, key: DatabaseKey? = nil, cipher: CipherSettings = .sqlcipher4,
                       rows: Int = 300, walFrames: Bool = false) throws {
        let building = walFrames ? path + ".building" : path
        var options = Database.Options()
        options.cipher = cipher
        options.journalMode = walFrames ? .wal : .default
        let db = try Database(path: building, key: key, options: options)
        try db.execute("""
            PRAGMA auto_vacuum = INCREMENTAL;
            PRAGMA user_version = 7;
            PRAGMA application_id = \(applicationID);
            CREATE TABLE author(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE);
            CREATE TABLE note(id INTEGER PRIMARY KEY, author_id INTEGER REFERENCES author(id),
                              title TEXT NOT NULL, body BLOB, score REAL);
            CREATE INDEX note_by_author ON note(author_id, score);
            CREATE TABLE audit(note_id INTEGER, action TEXT);
            CREATE TRIGGER note_audit AFTER INSERT ON note BEGIN INSERT INTO audit VALUES (new.id, 'insert'); END;
            CREATE VIEW note_titles AS SELECT n.title, a.name FROM note n JOIN author a ON a.id = n.author_id;
            """)
        try db.inTransaction { db in
            for i in 1...12 { try db.execute("INSERT INTO author(name) VALUES (?)", ["author \(i)"]) }
            try db.execute("DELETE FROM author WHERE id > 10")   // sqlite_sequence stays at 12
            let insert = try db.makeStatement("INSERT INTO note(author_id, title, body, score) VALUES (?, ?, ?, ?)")
            for i in 0..<rows {
                let body = Data((0..<(i % 97)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) })
                try insert.execute([i % 10 + 1, "note number \(i) with some words", body, Double(i) / 7])
            }
        }
        try db.execute("ANALYZE")
        guard walFrames else { return db.close() }
        // Copy the file and its WAL while the writer is still open: the copy
        // has committed frames that no checkpoint has moved yet.
        try db.execute("INSERT INTO audit VALUES (-1, 'last write, only in the WAL')")
        try FileManager.default.copyItem(atPath: building, toPath: path)
        try FileManager.default.copyItem(atPath: building + "-wal", toPath: path + "-wal")
        db.close()
        try FileManager.default.removeItem(atPath: building)
    }

    /// Everything an export must keep: schema, rows of every table (in rowid
    /// order), user_version, application_id.
    public static func snapshot(_ path: String, key: DatabaseKey? = nil, cipher: CipherSettings = .sqlcipher4) throws -> [String] {
        var options = Database.Options()
        options.readOnly = true
        options.cipher = cipher
        let db = try Database(path: path, key: key, options: options)
        defer { db.close() }
        var lines = try db.fetchAll("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
            .map { row in (0..<4).map { "\(row[$0])" }.joined(separator: "|") }
        lines.append("user_version=\(try db.fetchScalar(Int.self, "PRAGMA user_version")!)")
        lines.append("application_id=\(try db.fetchScalar(Int.self, "PRAGMA application_id")!)")
        lines.append("auto_vacuum=\(try db.fetchScalar(Int.self, "PRAGMA auto_vacuum")!)")
        for table in ["author", "note", "audit", "sqlite_sequence", "sqlite_stat1"] {
            for row in try db.fetchAll("SELECT * FROM \(table) ORDER BY rowid") {
                lines.append(table + ":" + (0..<row.count).map { "\(row[$0])" }.joined(separator: "|"))
            }
        }
        return lines
    }

    /// The names in `directory`, sorted.
    public static func files(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }
}

/// Removes the database at `path` and its companions (`-wal`, `-shm`,
/// `-journal`), which a reader leaves beside a WAL database and which the
/// routines refuse to leave beside a file they write.
public func removeDatabaseFiles(_ path: String) {
    for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
}
