import CSQLCipher
import Synchronization

/// Closes a connection without the checkpoint SQLite runs when the last
/// connection to a WAL database closes.
///
/// That checkpoint copies the log's frames into the database file as they
/// are, without decrypting them, and deletes the log. After a failed open
/// (a wrong key, a log that belongs to another database) or a command that
/// only read, it would rewrite a file nobody asked to change. SQLite before
/// 3.16 (Debian 12's SQLCipher 3.4.1) has no switch for it; what every
/// version honours is that a connection checkpoints on close only when it
/// gets an exclusive lock on the file. So a second handle of SQLite's own
/// file layer, in this process, holds a shared lock on the file while the
/// connection closes: SQLite counts this process's shared locks per file and
/// refuses the exclusive one. The log and its index stay as they were.
enum CheckpointBlock {
    /// Closes `handle` (through `close`) while a shared lock on its main
    /// database file keeps SQLite from checkpointing it.
    ///
    /// When the lock cannot be taken because another connection of this
    /// process holds a stronger one, that connection keeps the closing one
    /// from its exclusive lock too, and it does not checkpoint. But a
    /// closing connection that holds the exclusive lock itself (exclusive
    /// locking mode: the in-place routines' source) checkpoints whatever is
    /// done here: those routines authenticate the log before they lock the
    /// file. When the file cannot be opened again (it is gone), the
    /// connection closes as usual.
    static func closing(_ handle: OpaquePointer, vfs: String?, close: () -> Void) {
        guard let name = sqlite3_db_filename(handle, "main"), name.pointee != 0,
              withSharedLock(onFile: String(cString: name), vfs: vfs, close) else { return close() }
    }

    /// Runs `body` while a second handle of SQLite's file layer holds a
    /// shared lock on the database file at `path`; false (and `body` not
    /// run) when the lock cannot be taken: another connection, of this
    /// process or another, holds a stronger one.
    static func withSharedLock(onFile path: String, vfs: String? = nil, _ body: () -> Void) -> Bool {
        var blocker: OpaquePointer?
        // Read-write under unix-excl: its locks on a file it may not write
        // are real POSIX locks, which would replace the process's own.
        let mode = vfs == "unix-excl" ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY
        let code = sqlite3_open_v2(path, &blocker, mode | SQLITE_OPEN_NOMUTEX, vfs)
        defer { sqlite3_close_v2(blocker) }
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard code == SQLITE_OK, let blocker,
              sqlite3_file_control(blocker, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
              let file, let methods = file.pointee.pMethods,
              methods.pointee.xLock(file, SQLITE_LOCK_SHARED) == SQLITE_OK else { return false }
        body()
        _ = methods.pointee.xUnlock(file, SQLITE_LOCK_NONE)
        return true
    }
}

/// The connections that met a page that does not decrypt or is malformed
/// (SQLITE_NOTADB, SQLITE_CORRUPT): their WAL may be another database's or
/// damaged, so they close without checkpointing it into the file.
final class DamagedConnections: Sendable {
    static let shared = DamagedConnections()
    /// The addresses of the handles that met damage.
    private let handles = Mutex<Set<Int>>([])

    /// Notes that `handle` met `code`, when it is damage.
    func note(_ handle: OpaquePointer, code: Int32) {
        guard code & 0xFF == SQLITE_NOTADB || code & 0xFF == SQLITE_CORRUPT else { return }
        handles.withLock { _ = $0.insert(Int(bitPattern: handle)) }
    }

    /// Whether `handle` met damage; forgets it (the handle is closing).
    func remove(_ handle: OpaquePointer) -> Bool {
        handles.withLock { $0.remove(Int(bitPattern: handle)) != nil }
    }
}
