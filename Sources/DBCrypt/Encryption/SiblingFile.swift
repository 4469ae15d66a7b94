import Foundation

/// The new file a routine writes beside its destination, and the file-system
/// steps that make replacing the destination atomic and durable.
///
/// Why a sibling: `rename(2)` replaces a file atomically only within one file
/// system, so the new database is written in the destination's own directory.
/// Its name marks it as DBCrypt's and carries the writer's process id, so a
/// later run can tell an abandoned temporary (its writer is dead) from one in
/// use, and never deletes a file that is not its own.
package struct SiblingFile {
    /// The path of the temporary database.
    package let path: String
    /// The destination it will replace.
    package let destination: String

    /// The directory holding `path` (`.` for a bare file name).
    static func directory(of path: String) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        return directory.isEmpty ? "." : directory
    }

    /// `.<name>.dbcrypt-<pid>-<random>` in the destination's directory.
    static func prefix(for destination: String) -> String { "." + (destination as NSString).lastPathComponent + ".dbcrypt-" }

    /// Creates the temporary file, empty, with mode 0600, failing if the name
    /// is taken. With `original`, the new file gets that file's owner, group
    /// and permission bits instead, set on the open descriptor (so nothing
    /// swapped in at that name meanwhile can receive them), so that whoever
    /// could open the original can open its replacement, and no one else.
    ///
    /// - throws: ``DatabaseError/permissionDenied(path:)`` or
    ///   ``DatabaseError/cannotOpen(path:reason:)`` when the directory refuses it;
    ///   ``DatabaseError/ownershipNotKept(path:)`` when this process may not
    ///   give it the original's owner or group.
    package static func create(beside destination: String, keepingOwnerAndModeOf original: String? = nil) throws -> SiblingFile {
        let directory = directory(of: destination)
        let name = prefix(for: destination) + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let path = (directory as NSString).appendingPathComponent(name)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            if code == EACCES || code == EPERM { throw DatabaseError.permissionDenied(path: directory) }
            // Not the owner or the mode: no permission would help.
            if code == EROFS { throw DatabaseError.cannotOpen(path: directory, reason: "it is on a read-only file system: write elsewhere, or mount it writable") }
            throw DatabaseError.cannotOpen(path: path, reason: String(cString: strerror(code)))
        }
        defer { close(fd) }
        let sibling = SiblingFile(path: path, destination: destination)
        if let original {
            do {
                try adoptOwnerAndMode(of: original, fd: fd)
            } catch {
                sibling.remove()
                throw error
            }
        }
        return sibling
    }

    private static func adoptOwnerAndMode(of original: String, fd: Int32) throws {
        var wanted = stat(), current = stat()
        guard stat(original, &wanted) == 0, fstat(fd, &current) == 0 else { return }
        if wanted.st_uid != current.st_uid || wanted.st_gid != current.st_gid {
            guard fchown(fd, wanted.st_uid, wanted.st_gid) == 0 else { throw DatabaseError.ownershipNotKept(path: original) }
        }
        guard fchmod(fd, wanted.st_mode & 0o777) == 0 else {
            throw DatabaseError.cannotOpen(path: original, reason: "setting the new copy's mode failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Removes the temporary database and any journal SQLite left beside it.
    package func remove() {
        for suffix in ["", "-journal", "-wal", "-shm"] { unlink(path + suffix) }
    }

    /// Flushes the temporary file's bytes to the disk.
    package func sync() throws {
        try Self.fsync(path: path, what: "the new database")
    }

    /// Renames the temporary file over the destination, then flushes the
    /// directory so that the rename itself survives a power loss.
    package func replaceDestination() throws {
        guard rename(path, destination) == 0 else {
            throw DatabaseError.cannotOpen(path: destination, reason: "renaming the new database failed: \(String(cString: strerror(errno)))")
        }
        try Self.fsync(path: Self.directory(of: destination), what: "the directory")
    }

    private static func fsync(path: String, what: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw DatabaseError.cannotOpen(path: path, reason: "opening \(what) to flush it failed: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        guard Foundation.fsync(fd) == 0 else {
            throw DatabaseError.cannotOpen(path: path, reason: "flushing \(what) to disk failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Deletes temporaries that an interrupted run left beside `destination`:
    /// files named with this routine's prefix whose writing process is gone.
    /// Returns how many files were removed.
    @discardableResult
    package static func removeAbandoned(beside destination: String) -> Int {
        let folder = directory(of: destination)
        let prefix = prefix(for: destination)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return 0 }
        var removed = 0
        for name in names where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            guard let pidText = rest.split(separator: "-").first, let pid = pid_t(pidText),
                  !isAlive(pid) else { continue }
            if unlink((folder as NSString).appendingPathComponent(name)) == 0 { removed += 1 }
        }
        return removed
    }

    private static func isAlive(_ pid: pid_t) -> Bool {
        pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH
    }

    /// Bytes available to this process in the directory of `path`, or nil when unknown.
    static func availableBytes(near path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(directory(of: path), &info) == 0 else { return nil }
        // Some network and FUSE file systems report huge counts: cap, never trap.
        guard let blocks = Int64(exactly: info.f_bavail), let size = Int64(exactly: info.f_frsize) else { return .max }
        let (bytes, overflow) = blocks.multipliedReportingOverflow(by: size)
        return overflow ? .max : bytes
    }

    /// The size in bytes of the file at `path`, or 0 when there is none.
    static func size(of path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }
}
