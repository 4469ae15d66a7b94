// The floor under any key-value store kept in SQLite: the store's table
// shape driven through SQLite's C API, with nothing sealed and nothing
// computed in Swift while it is timed. Whatever DBCrypt does, a set cannot
// cost less than this commit, nor a get less than this read.
import CSQLCipher
import Foundation

/// A table in the store's shape (16-byte tags, the value beside them) in a
/// file of its own, WAL with `synchronous = NORMAL` and an 8 MiB cache like
/// the pool's, but SQLite's automatic checkpoints turned off: its commits
/// never copy the log, as the pool's, which checkpoints on a thread of its
/// own, mostly do not. ``truncateLog()`` empties the log between measurements.
final class RawSQLiteTable {
    private var db: OpaquePointer?
    private var begin, commit, update, select: OpaquePointer?
    private let tags: [[UInt8]]

    /// Creates the table at `path` with one row for each of `tags` (16 bytes each), holding `value`;
    /// `vfs` "unix-excl" keeps the file to this process, with no file lock per transaction.
    init(path: String, tags: [[UInt8]], value: Data, vfs: String? = nil) {
        self.tags = tags
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, vfs)
        exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -8192; PRAGMA wal_autocheckpoint = 0")
        exec("CREATE TABLE entry(store TEXT NOT NULL, tag BLOB NOT NULL, value BLOB NOT NULL, PRIMARY KEY(store, tag)) WITHOUT ROWID")
        begin = prepare("BEGIN IMMEDIATE")
        commit = prepare("COMMIT")
        update = prepare("UPDATE entry SET value = ? WHERE store = 'default' AND tag = ?")
        select = prepare("SELECT value FROM entry WHERE store = 'default' AND tag = ?")
        let insert = prepare("INSERT INTO entry(store, value, tag) VALUES ('default', ?, ?)")
        exec("BEGIN")
        for tag in tags {
            bind(insert, tag: tag, value: value)
            step(insert)
        }
        exec("COMMIT")
        sqlite3_finalize(insert)
    }

    deinit {
        for statement in [begin, commit, update, select] { sqlite3_finalize(statement) }
        sqlite3_close_v2(db)
    }

    /// Sets the value of each entry of `indices` in its own transaction.
    func set(_ indices: Range<Int>, value: Data) {
        for i in indices {
            step(begin)
            bind(update, tag: tags[i % tags.count], value: value)
            step(update)
            step(commit)
        }
    }

    /// Sets the value of each entry of `indices` in one transaction.
    func batch(_ indices: Range<Int>, value: Data) {
        step(begin)
        for i in indices {
            bind(update, tag: tags[i % tags.count], value: value)
            step(update)
        }
        step(commit)
    }

    /// Reads the value of each entry of `indices` into a `Data`; returns their total size.
    func get(_ indices: [Int]) -> Int {
        var total = 0
        for i in indices {
            tags[i].withUnsafeBytes { _ = sqlite3_bind_blob(select, 1, $0.baseAddress, 16, dbcrypt_transient()) }
            guard sqlite3_step(select) == SQLITE_ROW else { fatalError(String(cString: sqlite3_errmsg(db))) }
            total += Data(bytes: sqlite3_column_blob(select, 0)!, count: Int(sqlite3_column_bytes(select, 0))).count
            sqlite3_reset(select)
        }
        return total
    }

    /// Copies the log into the file and empties it (between measurements, untimed).
    func truncateLog() { exec("PRAGMA wal_checkpoint(TRUNCATE)") }

    private func bind(_ statement: OpaquePointer?, tag: [UInt8], value: Data) {
        value.withUnsafeBytes { _ = sqlite3_bind_blob(statement, 1, $0.baseAddress, Int32($0.count), dbcrypt_transient()) }
        tag.withUnsafeBytes { _ = sqlite3_bind_blob(statement, 2, $0.baseAddress, 16, dbcrypt_transient()) }
    }

    private func step(_ statement: OpaquePointer?) {
        guard sqlite3_step(statement) == SQLITE_DONE else { fatalError(String(cString: sqlite3_errmsg(db))) }
        sqlite3_reset(statement)
    }

    private func prepare(_ sql: String) -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { fatalError(String(cString: sqlite3_errmsg(db))) }
        return statement
    }

    private func exec(_ sql: String) {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { fatalError(String(cString: sqlite3_errmsg(db))) }
    }
}
