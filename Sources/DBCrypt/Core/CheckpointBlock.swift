import CSQLCipher
import Foundation

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
    /// process holds a stronger one, the closing connection cannot get its
    /// exclusive lock either, and does not checkpoint. When the file cannot
    /// be opened again (it is gone), the connection closes as usual.
    static func closing(_ handle: OpaquePointer, vfs: String?, close: () -> Void) {
        guard let name = sqlite3_db_filename(handle, "main"), name.pointee != 0 else { return close() }
        var blocker: OpaquePointer?
        let code = sqlite3_open_v2(name, &blocker, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, vfs)
        defer { sqlite3_close_v2(blocker) }
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard code == SQLITE_OK, let blocker,
              sqlite3_file_control(blocker, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
              let file, let methods = file.pointee.pMethods,
              methods.pointee.xLock(file, SQLITE_LOCK_SHARED) == SQLITE_OK else { return close() }
        close()
        _ = methods.pointee.xUnlock(file, SQLITE_LOCK_NONE)
    }
}

/// The connections that met a page that does not decrypt or is malformed
/// (SQLITE_NOTADB, SQLITE_CORRUPT): their WAL may be another database's or
/// damaged, so they close without checkpointing it into the file.
final class DamagedConnections: @unchecked Sendable {
    // @unchecked: `handles` is touched under `lock` only.
    static let shared = DamagedConnections()
    private var handles: Set<UnsafeMutableRawPointer> = []
    private let lock = NSLock()

    /// Notes that `handle` met `code`, when it is damage.
    func note(_ handle: OpaquePointer, code: Int32) {
        guard code & 0xFF == SQLITE_NOTADB || code & 0xFF == SQLITE_CORRUPT else { return }
        lock.lock()
        defer { lock.unlock() }
        handles.insert(UnsafeMutableRawPointer(handle))
    }

    /// Whether `handle` met damage; forgets it (the handle is closing).
    func remove(_ handle: OpaquePointer) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return handles.remove(UnsafeMutableRawPointer(handle)) != nil
    }
}
