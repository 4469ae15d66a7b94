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
    package static func directory(of path: String) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        return directory.isEmpty ? "." : directory
    }

    /// `.<name>.dbcrypt-<pid>-<random>` in the destination's directory.
    package static func prefix(for destination: String) -> String { "." + (destination as NSString).lastPathComponent + ".dbcrypt-" }

    /// Creates the temporary file, empty, with mode 0600, failing if the name
    /// is taken. With `original`, the new file gets that file's owner, group
    /// and permission bits instead, set on the open descriptor (so nothing
    /// swapped in at that name meanwhile can receive them), so that whoever
    /// could open the original can open its replacement, and no one else.
    ///
    /// - throws: ``FileError/permissionDenied(path:)`` or
    ///   ``FileError/readOnlyFileSystem(path:)`` naming the directory when it
    ///   refuses it, another ``FileError`` naming the file;
    ///   ``FileError/ownershipNotKept(path:)`` when this process may not
    ///   give it the original's owner or group.
    package static func create(beside destination: String, keepingOwnerAndModeOf original: String? = nil) throws(FileError) -> SiblingFile {
        let directory = directory(of: destination)
        let name = prefix(for: destination) + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let path = (directory as NSString).appendingPathComponent(name)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            // Not the owner or the mode: no permission would help.
            if [EACCES, EPERM, EROFS].contains(code) { throw FileError(errno: code, path: directory) }
            throw FileError(errno: code, path: path)
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

    private static func adoptOwnerAndMode(of original: String, fd: Int32) throws(FileError) {
        var wanted = stat(), current = stat()
        guard stat(original, &wanted) == 0, fstat(fd, &current) == 0 else { return }
        if wanted.st_uid != current.st_uid || wanted.st_gid != current.st_gid {
            guard fchown(fd, wanted.st_uid, wanted.st_gid) == 0 else { throw .ownershipNotKept(path: original) }
        }
        guard fchmod(fd, wanted.st_mode & 0o777) == 0 else {
            throw .system(path: original, reason: "setting the new copy's mode failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Removes the temporary database and any journal SQLite left beside it.
    package func remove() {
        unlink(path)
        for companion in CompanionFile.allCases { unlink(companion.path(of: path)) }
    }

    /// Writes all of `bytes` into the temporary file, from its start (flush
    /// it with ``sync()``, as ``replace(_:keepingOwnerAndModeOf:write:check:)`` does).
    ///
    /// - throws: ``FileError`` (``FileError/noSpace(path:)`` for a full disk).
    package func fill(with bytes: Data) throws(FileError) {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError(errno: errno, path: path) }
        defer { close(fd) }
        try bytes.withUnsafeBytes { bytes in Result { () throws(FileError) in try DurableWrite.writeAll(bytes, to: fd, at: 0, path: path) } }.get()
    }

    /// Replaces the file at `destination` with a sibling that `write`
    /// fills: the one replacement sequence. The sibling is made (mode 0600,
    /// or `original`'s owner and mode), filled, flushed to the disk, handed
    /// to `check`, and only then renamed over the destination, the directory
    /// flushed after. Whenever the process dies or anything throws, the
    /// destination holds what it held, and the sibling is gone (or removed
    /// by a later run's ``removeAbandoned(beside:)``).
    ///
    /// - throws: ``FileError`` for a step of the file system, and what `write` and `check` throw.
    package static func replace(_ destination: String, keepingOwnerAndModeOf original: String? = nil,
                                write: (SiblingFile) throws -> Void, check: (SiblingFile) throws -> Void = { _ in }) throws {
        let sibling = try create(beside: destination, keepingOwnerAndModeOf: original)
        var replaced = false
        defer { if !replaced { sibling.remove() } }
        try write(sibling)
        try sibling.sync()
        try check(sibling)
        try sibling.replaceDestination()
        replaced = true
    }

    /// Replaces the file at `destination` with `bytes`, whole or not at all,
    /// through ``replace(_:keepingOwnerAndModeOf:write:check:)``. For small
    /// files (a receipt, a setting), not databases.
    ///
    /// - throws: ``FileError``; nothing is left behind.
    package static func replace(_ destination: String, with bytes: Data) throws(FileError) {
        removeAbandoned(beside: destination)
        do {
            try replace(destination, write: { try $0.fill(with: bytes) })
        } catch let error as FileError {
            throw error
        } catch {
            throw .system(path: destination, reason: "\(error)")
        }
    }

    /// Flushes the temporary file's bytes to the disk.
    ///
    /// - throws: ``FileError/system(path:reason:)``.
    package func sync() throws(FileError) {
        try DurableWrite.sync(path: path, what: "the new database")
    }

    /// Renames the temporary file over the destination, then flushes the
    /// directory so that the rename itself survives a power loss.
    ///
    /// - throws: ``FileError/system(path:reason:)``.
    package func replaceDestination() throws(FileError) {
        guard rename(path, destination) == 0 else {
            throw .system(path: destination, reason: "renaming the new database failed: \(String(cString: strerror(errno)))")
        }
        try DurableWrite.syncDirectory(of: destination)
    }

    /// Deletes temporaries that an interrupted run left beside `destination`:
    /// files named with its prefix whose writing process is gone. Returns
    /// how many files were removed.
    @discardableResult
    package static func removeAbandoned(beside destination: String) -> Int {
        removeAbandoned(in: directory(of: destination), prefix: prefix(for: destination))
    }

    /// Deletes the temporaries in `folder` whose names start with `prefix`
    /// (`.` for any sibling file there) and whose writing process is gone.
    /// Returns how many files were removed.
    @discardableResult
    package static func removeAbandoned(in folder: String, prefix: String = ".") -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return 0 }
        var removed = 0
        for name in names where name.hasPrefix(prefix) {
            guard let marker = name.range(of: ".dbcrypt-", options: .backwards),
                  let pidText = name[marker.upperBound...].split(separator: "-").first, let pid = pid_t(pidText),
                  !isAlive(pid) else { continue }
            if unlink((folder as NSString).appendingPathComponent(name)) == 0 { removed += 1 }
        }
        return removed
    }

    private static func isAlive(_ pid: pid_t) -> Bool {
        pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH
    }

    /// Bytes available to this process in the directory of `path`, or nil when unknown.
    package static func availableBytes(near path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(directory(of: path), &info) == 0 else { return nil }
        // Some network and FUSE file systems report huge counts: cap, never trap.
        guard let blocks = Int64(exactly: info.f_bavail), let size = Int64(exactly: info.f_frsize) else { return .max }
        let (bytes, overflow) = blocks.multipliedReportingOverflow(by: size)
        return overflow ? .max : bytes
    }

    /// The size in bytes of the file at `path`, or 0 when there is none.
    package static func size(of path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }
}
