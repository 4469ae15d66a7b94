#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether another process holds one of SQLite's locks on a database, asked
/// of the system (`F_GETLK`, which takes no lock) through a ``FileReader``,
/// so that the asking never drops a lock this process holds on the file.
/// This process's own locks never count.
package enum SQLiteLocks {
    /// A phrase naming who holds a lock on the database at `path` (a
    /// transaction in rollback mode: the lock bytes at 1 GiB; any open
    /// connection in WAL mode: the `-shm` file's lock bytes), or nil when
    /// no one does or the files cannot be read.
    package static func holder(of path: String) -> String? {
        if let pid = try? FileReader(path: path).lockHolder(start: 0x4000_0000, length: 512) { return "process \(pid) is in a transaction" }
        if let pid = try? FileReader(path: CompanionFile.shm.path(of: path)).lockHolder(start: 120, length: 9) { return "process \(pid) has it open" }
        return nil
    }

    /// The process that holds a lock on bytes `start..<start + length` of
    /// the file open as `fd` that a write lock would conflict with, or nil
    /// when none does (or the system cannot tell).
    package static func lockHolder(_ fd: Int32, start: Int64, length: Int64) -> pid_t? {
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(start)
        lock.l_len = off_t(length)
        guard fcntl(fd, F_GETLK, &lock) == 0, lock.l_type != Int16(F_UNLCK) else { return nil }
        return lock.l_pid
    }
}

extension FileReader {
    /// The process that holds a lock on bytes `start..<start + length` of
    /// the file that a write lock would conflict with, or nil when none does
    /// (or the system cannot tell).
    package func lockHolder(start: Int64, length: Int64) -> pid_t? {
        withDescriptor { SQLiteLocks.lockHolder($0, start: start, length: length) }
    }
}
