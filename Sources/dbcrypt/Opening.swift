import DBCrypt
import Foundation

/// Opens `path` for a command that only reads it. A transaction that a
/// stopped process left unfinished is first rolled back, as the first
/// read-write connection of any SQLite program does by itself, when this
/// process may write the file and its directory; a note on stderr says so.
///
/// - throws: the errors of `Database.init(path:key:options:)`, among them
///   `unfinishedTransaction` when the transaction cannot be rolled back here.
func openForReading(_ path: String, key: DatabaseKey?, options: Database.Options) throws -> Database {
    var readOnly = options
    readOnly.readOnly = true
    do {
        return try Database(path: path, key: key, options: readOnly)
    } catch let unfinished as DatabaseError where unfinished == .unfinishedTransaction(path: path) && mayRollBack(path) {
        var writable = options
        writable.readOnly = false
        writable.create = false
        let journal = path + "-journal"
        do {
            // Rolled back at open; the log, if any, is left as it is.
            try Database(path: path, key: key, options: writable).closeWithoutCheckpoint()
        } catch let error as DatabaseError {
            // SQLite rolls a journal back before it reads the first page, so
            // even a wrong key may have rolled it back.
            if !FileManager.default.fileExists(atPath: journal) { noteRollback(path) }
            if case .wrongKeyOrNotADatabase = error { throw error }
            throw unfinished
        }
        noteRollback(path)
        return try Database(path: path, key: key, options: readOnly)
    }
}

/// Whether this process may write the file and its directory, where the
/// journal is deleted once rolled back.
private func mayRollBack(_ path: String) -> Bool {
    let folder = (path as NSString).deletingLastPathComponent
    return access(path, W_OK) == 0 && access(folder.isEmpty ? "." : folder, W_OK) == 0
}

private func noteRollback(_ path: String) {
    printError("note: rolled back a transaction that a stopped process left unfinished in \(path).")
}

/// Runs `body` with `db`, then closes it, with SQLite's checkpoint on close
/// only when `body` succeeded and committed something (the database's log
/// changed): a run that failed, or only read, leaves the database, its
/// `-wal` and `-shm` as they were.
func closing<T>(_ db: Database, at path: String, _ body: () throws -> T) throws -> T {
    try closing(path, close: db.close, closeWithoutCheckpoint: db.closeWithoutCheckpoint, body)
}

/// ``closing(_:at:_:)`` for a connection closed by `close` (with SQLite's
/// checkpoint) or `closeWithoutCheckpoint`: a queue's.
func closing<T>(_ path: String, close: () throws -> Void, closeWithoutCheckpoint: () throws -> Void,
                _ body: () throws -> T) throws -> T {
    let log = LogState(path)
    do {
        let result = try body()
        if LogState(path) != log { try close() } else { try closeWithoutCheckpoint() }
        return result
    } catch {
        try? closeWithoutCheckpoint()
        throw error
    }
}

/// The size and modification time of the `-wal` beside a database: a
/// commit in WAL mode changes them, a read does not.
struct LogState: Equatable {
    private var size: Int64 = -1
    private var modified = timespec()

    init(_ database: String) {
        var info = stat()
        guard stat(database + "-wal", &info) == 0 else { return }
        size = Int64(info.st_size)
        modified = info.st_mtim
    }

    /// Whether the log holds at least a frame's worth of bytes after its
    /// 32-byte header (a 24-byte frame header, at least).
    var hasFrames: Bool { size > 32 + 24 }

    static func == (a: LogState, b: LogState) -> Bool {
        a.size == b.size && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
    }
}
