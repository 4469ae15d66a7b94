import CSQLCipher
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the first bytes of a database file without dropping the locks
/// this process holds on it.
///
/// POSIX releases every lock a process holds on a file as soon as the
/// process closes *any* descriptor of that file. A plain `open`/`close` of
/// the file while one of our connections holds a lock (a write transaction,
/// the shared lock of a connection in WAL mode) would let another process
/// write at the same time, or take the file out of WAL mode under us.
/// SQLite's own file layer knows this: it keeps a descriptor open until the
/// file's last lock is released. So the bytes are read through it, on a
/// connection that is opened for that alone and reads nothing else.
enum DatabaseFileStart {
    /// Up to `count` bytes from the start of the file at `path` (fewer when
    /// the file is shorter), or nil when there is no file there.
    ///
    /// - throws: ``DatabaseError/isDirectory(path:)``, ``DatabaseError/permissionDenied(path:)``,
    ///   or ``DatabaseError/cannotOpen(path:reason:)`` for other system errors.
    static func read(_ path: String, count: Int) throws -> [UInt8]? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            switch errno {
            case ENOENT: return nil
            case EACCES, EPERM: throw DatabaseError.permissionDenied(path: path)
            case let code: throw DatabaseError.cannotOpen(path: path, reason: String(cString: strerror(code)))
            }
        }
        // A device or a FIFO is never a database: opening a FIFO would wait for a writer.
        try FilePaths.requireRegularFile(path, info)

        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        defer { sqlite3_close_v2(handle) }
        guard code == SQLITE_OK, let handle else {
            switch handle.map({ sqlite3_system_errno($0) }) ?? 0 {
            case ENOENT: return nil
            case EACCES, EPERM: throw DatabaseError.permissionDenied(path: path)
            case EISDIR: throw DatabaseError.isDirectory(path: path)
            case 0: throw DatabaseError.cannotOpen(path: path, reason: String(cString: sqlite3_errstr(code)))
            case let system: throw DatabaseError.cannotOpen(path: path, reason: String(cString: strerror(system)))
            }
        }
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
              let file, let methods = file.pointee.pMethods else {
            throw DatabaseError.cannotOpen(path: path, reason: "SQLite did not open the file")
        }
        // The size from `stat`: SQLite's own reports a 1-byte file as empty.
        var bytes = [UInt8](repeating: 0, count: min(count, Int(max(info.st_size, 0))))
        guard !bytes.isEmpty else { return [] }
        let read = bytes.withUnsafeMutableBytes { methods.pointee.xRead(file, $0.baseAddress, Int32($0.count), 0) }
        if read == SQLITE_IOERR | (2 << 8) {   // SQLITE_IOERR_SHORT_READ
            // Cut short meanwhile: what is there now (SQLite zero-filled the rest).
            guard stat(path, &info) == 0 else { return nil }
            bytes.removeLast(max(bytes.count - Int(max(info.st_size, 0)), 0))
        } else if read != SQLITE_OK {
            var code: Int32 = 0
            sqlite3_file_control(handle, "main", SQLITE_FCNTL_LAST_ERRNO, &code)
            throw DatabaseError.cannotOpen(path: path, reason: code == 0 ? "reading it failed" : String(cString: strerror(code)))
        }
        return bytes
    }
}
