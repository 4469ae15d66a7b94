import DBCrypt
import Foundation
import SQLCipherFormat
import TestFixtures
import XCTest

/// The passphrase of the fixtures the peers read (PeerFileTests): the
/// page reader's own key derivation is what those test.
let fixturePassphrase = "correct horse"
/// The key of every other fixture: a raw key, which the page reader uses
/// with no derivation; ``fixtureKeyText`` is its text for a peer.
let fixtureKey = DatabaseKey.named(fixturePassphrase)
let fixtureKeyText = TestKeys.text(named: fixturePassphrase)

/// A database DBCrypt (the linked SQLCipher) writes: table `t` with `rows`
/// rows of text and a 300-byte blob, with `settings`. With `leavingFramesInLog`,
/// a copy is taken while the connection is open in WAL mode with its last
/// transactions still in the `-wal` file, as a running app leaves it.
func makeDatabase(_ test: XCTestCase, _ settings: CipherSettings = .sqlcipher4, rows: Int = 200,
                  leavingFramesInLog: Bool = false, key: DatabaseKey = fixtureKey) throws -> String {
    let dir = try makeTemporaryDirectory(test)
    let path = dir.appendingPathComponent("fixture.db").path
    var options = Database.Options()
    options.cipher = settings
    let db = try Database(path: path, key: key, options: options)
    try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, data BLOB)")
    try db.execute("INSERT INTO t(name, data) SELECT 'row ' || i, randomblob(300) FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < \(rows / 2)) SELECT i FROM c)")
    // Free pages, which verification must cover too.
    try db.execute("CREATE TABLE scratch AS WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 40) SELECT randomblob(2000) AS b FROM c; DROP TABLE scratch")
    XCTAssertGreaterThan(try db.fetchScalar(Int.self, "PRAGMA freelist_count") ?? 0, 3)
    guard leavingFramesInLog else {
        try db.execute("INSERT INTO t(name, data) SELECT name || ' again', data FROM t")
        db.close()
        return path
    }
    _ = try db.fetchAll(String.self, "PRAGMA journal_mode = WAL")
    try db.execute("PRAGMA wal_autocheckpoint = 0")
    try db.execute("INSERT INTO t(name, data) SELECT name || ' again', data FROM t")
    try db.execute("UPDATE t SET name = 'changed' WHERE id % 7 = 0")
    let copy = dir.appendingPathComponent("copy.db").path
    try FileManager.default.copyItem(atPath: path, toPath: copy)
    try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
    db.close()
    return copy
}

/// The rows of `t` as one line each, read through the linked SQLCipher.
func rowsThroughSQLCipher(_ path: String, _ settings: CipherSettings = .sqlcipher4, key: DatabaseKey = fixtureKey) throws -> [String] {
    var options = Database.Options()
    options.cipher = settings
    options.readOnly = true
    let db = try Database(path: path, key: key, options: options)
    defer { db.close() }
    return try db.fetchAll(String.self, "SELECT id || ' ' || name || ' ' || hex(data) FROM t ORDER BY id")
}

/// The rows of `t` in a plaintext file, read by the system's Python and its SQLite (not ours).
func rowsThroughStockSQLite(_ path: String) throws -> [String] {
    try runPythonSQLite(path, """
        for row in db.execute("SELECT id || ' ' || name || ' ' || hex(data) FROM t ORDER BY id"): print(row[0])
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        """).split(separator: "\n").map(String.init)
}

/// Changes the byte at `offset` of `path` by XOR with `mask` (twice restores it).
func flip(_ path: String, at offset: Int64, mask: UInt8) throws {
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.seek(toOffset: UInt64(offset))
    let byte = try handle.read(upToCount: 1)![0]
    try handle.seek(toOffset: UInt64(offset))
    try handle.write(contentsOf: [byte ^ mask])
}

/// The size of the file at `path`.
func fileSize(_ path: String) -> Int64 {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? 0
}
