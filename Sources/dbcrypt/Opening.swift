import DBCrypt
import Foundation

/// Opens `path` for a command that only reads it (``Database/openReadOnly(path:key:options:rolledBack:)``),
/// saying on stderr when a stopped process's transaction was rolled back first.
func openForReading(_ path: String, key: DatabaseKey?, options: Database.Options) throws -> Database {
    try Database.openReadOnly(path: path, key: key, options: options) {
        printError("note: rolled back a transaction that a stopped process left unfinished in \(path).")
    }
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
