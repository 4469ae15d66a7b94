import Foundation

extension Database {
    /// Runs `body`, then closes the connection: with SQLite's checkpoint
    /// only when `body` succeeded and committed something (the database's
    /// `-wal` changed), else with ``closeWithoutCheckpoint()``, so that a
    /// run that failed, or only read, leaves the database, its `-wal` and
    /// its `-shm` as they were.
    ///
    /// - throws: what `body` throws, or the ``DatabaseError`` of the checkpoint on close.
    package func closing<T>(after body: () throws -> T) throws -> T {
        try WriteAheadLogFile.closing(besideDatabaseAt: path, close: close, closeWithoutCheckpoint: closeWithoutCheckpoint, after: body)
    }
}

extension DatabaseQueue {
    /// ``Database/closing(after:)`` for the queue's connection.
    ///
    /// - throws: what `body` throws, or ``DatabaseError/reentrantQueueAccess``
    ///   when called from inside the queue.
    package func closing<T>(after body: () throws -> T) throws -> T {
        try WriteAheadLogFile.closing(besideDatabaseAt: path, close: close, closeWithoutCheckpoint: closeWithoutCheckpoint, after: body)
    }
}

extension WriteAheadLogFile {
    /// The size and modification time of the `-wal` beside a database: a
    /// commit in WAL mode changes them, a read does not.
    struct State: Equatable {
        private var size: Int64 = -1
        private var modified = timespec()

        init(besideDatabaseAt path: String) {
            var info = stat()
            guard stat(CompanionFile.wal.path(of: path), &info) == 0 else { return }
            size = Int64(info.st_size)
            #if canImport(Darwin)
            modified = info.st_mtimespec
            #else
            modified = info.st_mtim
            #endif
        }

        static func == (a: State, b: State) -> Bool {
            a.size == b.size && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
        }
    }

    /// Runs `body`, then closes a connection to the database at `path` with
    /// `close` (SQLite's checkpoint) when `body` succeeded and the log
    /// changed, else with `closeWithoutCheckpoint`.
    static func closing<T>(besideDatabaseAt path: String, close: () throws -> Void, closeWithoutCheckpoint: () throws -> Void,
                           after body: () throws -> T) throws -> T {
        let log = State(besideDatabaseAt: path)
        do {
            let result = try body()
            if State(besideDatabaseAt: path) != log { try close() } else { try closeWithoutCheckpoint() }
            return result
        } catch {
            try? closeWithoutCheckpoint()
            throw error
        }
    }
}
