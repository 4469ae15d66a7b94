#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A new file written front to back, then flushed to the disk.
package final class FileWriter {
    package let path: String
    private var fd: Int32
    private var offset: Int64 = 0

    /// Whether this writer created the file (and so removes it on failure).
    private let created: Bool

    /// Creates `path` with mode 0600, or opens it if it exists and is empty
    /// (a sibling file made for an atomic replacement); never follows a link.
    ///
    /// - throws: ``FileError/exists(path:)`` when a non-empty file (or a
    ///   link) is there, or another ``FileError``.
    package init(creating path: String) throws(FileError) {
        self.path = path
        var fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        var created = true
        if fd < 0 && errno == EEXIST {
            fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
            created = false
            var info = stat()
            if fd >= 0 && (fstat(fd, &info) != 0 || info.st_mode & S_IFMT != S_IFREG || info.st_size != 0) {
                close(fd)
                throw .exists(path: path)
            }
        }
        guard fd >= 0 else {
            let code = errno
            throw code == ELOOP ? .exists(path: path) : FileError(errno: code, path: path)
        }
        self.fd = fd
        self.created = created
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Appends `bytes`.
    ///
    /// - throws: ``FileError`` (``FileError/noSpace(path:)`` for a full disk).
    package func write(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
        try DurableWrite.writeAll(bytes, to: fd, at: offset, path: path)
        offset += Int64(bytes.count)
    }

    /// Flushes the file to the disk and closes it.
    ///
    /// - throws: ``FileError``.
    package func finish() throws(FileError) {
        defer { close(fd); fd = -1 }
        try DurableWrite.sync(fd, path: path)
    }

    /// Undoes the writing: deletes the file this writer created, or empties
    /// the one it was given. For a run that failed or was cancelled.
    package func discard() {
        if fd >= 0 {
            if !created { _ = ftruncate(fd, 0) }
            close(fd)
            fd = -1
        }
        if created { unlink(path) }
    }
}
