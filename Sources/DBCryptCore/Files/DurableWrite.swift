#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes that reach the disk: every byte written (a short write or an
/// interrupted call continued), then flushed, and the directory flushed
/// after a name is made or changed in it, so that a power loss keeps the
/// name too. The one place such a loop is written.
package enum DurableWrite {
    /// Writes all of `bytes` to `fd` at `offset`, or at its current
    /// position when nil (a pipe, standard output).
    ///
    /// - throws: ``FileError`` naming `path` (``FileError/noSpace(path:)`` for a full disk).
    package static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32, at offset: Int64? = nil, path: String) throws(FileError) {
        var done = 0
        while done < bytes.count {
            let wrote = offset.map { pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t($0) + off_t(done)) }
                ?? write(fd, bytes.baseAddress! + done, bytes.count - done)
            if wrote < 0 {
                if errno == EINTR { continue }
                throw FileError(errno: errno, path: path)
            }
            done += wrote
        }
    }

    /// Flushes `fd` (open on `path`) to the disk.
    ///
    /// - throws: ``FileError`` naming `path`.
    package static func sync(_ fd: Int32, path: String) throws(FileError) {
        guard fsync(fd) == 0 else { throw FileError(errno: errno, path: path) }
    }

    /// Flushes the file or directory at `path` to the disk; `what` names it in an error.
    ///
    /// - throws: ``FileError/system(path:reason:)`` naming `what` and the step that failed.
    package static func sync(path: String, what: String) throws(FileError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw .system(path: path, reason: "opening \(what) to flush it failed: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        guard fsync(fd) == 0 else {
            throw .system(path: path, reason: "flushing \(what) to disk failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Flushes the directory that holds `path`, after a name in it was made or changed.
    ///
    /// - throws: ``FileError/system(path:reason:)``.
    package static func syncDirectory(of path: String) throws(FileError) {
        try sync(path: SiblingFile.directory(of: path), what: "the directory")
    }
}
