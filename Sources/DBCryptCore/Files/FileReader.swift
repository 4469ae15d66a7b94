#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A regular file opened read-only, read with `pread`: nothing is read that
/// is not asked for. One thread at a time.
///
/// Closing it keeps the process's locks. POSIX releases every lock a
/// process holds on a file as soon as the process closes *any* descriptor
/// of that file, so a plain `open`/`close` of a database while one of our
/// connections holds a lock on it (a write transaction, a WAL connection's
/// shared lock) would let another process write at the same time. When a
/// connection of this process has the file open (``OpenFiles/all``), the
/// descriptor is handed to the registry and closed when the last such
/// connection is gone, as SQLite does with its own descriptors.
package final class FileReader {
    /// The path it was opened by.
    package let path: String
    /// The file's size in bytes when it was opened.
    package let size: Int64
    /// Its permission bits (`st_mode & 0o7777`) when it was opened.
    package let permissions: UInt16
    private let fd: Int32
    private let id: FileIdentity

    /// Opens `path` (a link's target) read-only. A FIFO is refused, not waited on.
    ///
    /// - throws: ``FileError``: ``FileError/notFound(path:)`` when nothing is
    ///   there, ``FileError/isDirectory(path:)`` or
    ///   ``FileError/notRegularFile(path:kind:)`` for what is not a file.
    package init(path: String) throws(FileError) {
        self.path = path
        var known = stat()
        let parked = stat(path, &known) == 0 ? OpenFiles.all.takeParked(FileIdentity(known)) : nil
        let fd = parked ?? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw FileError(errno: errno, path: path) }
        // A parked descriptor goes back to the registry; closing it would drop the locks it waits for.
        func giveUp() { if parked != nil { OpenFiles.all.close(fd, of: FileIdentity(known)) } else { close(fd) } }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            giveUp()
            throw FileError(errno: code, path: path)
        }
        if let error = FileError(mode: info.st_mode, path: path) {
            giveUp()
            throw error
        }
        self.fd = fd
        self.size = Int64(info.st_size)
        self.permissions = UInt16(info.st_mode & 0o7777)
        self.id = FileIdentity(info)
    }

    deinit { OpenFiles.all.close(fd, of: id) }

    /// `body`'s result with the descriptor, which it must not close.
    func withDescriptor<R>(_ body: (Int32) -> R) -> R { body(fd) }

    /// Up to `count` bytes from the start of the file at `path` (fewer when
    /// it is shorter), or nil when nothing is there.
    ///
    /// - throws: ``FileError`` for anything else that keeps the file from being read.
    package static func start(of path: String, count: Int) throws(FileError) -> [UInt8]? {
        try ifPresent(path)?.read(count, at: 0)
    }

    /// The file at `path` opened as ``init(path:)`` opens it, or nil when nothing is there.
    ///
    /// - throws: ``FileError`` for anything else that keeps the file from being opened.
    package static func ifPresent(_ path: String) throws(FileError) -> FileReader? {
        do {
            return try FileReader(path: path)
        } catch .notFound {
            return nil
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at the end of the file.
    ///
    /// - throws: ``FileError/system(path:reason:)`` on an I/O error.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(FileError) -> Int {
        var done = 0
        while done < buffer.count {
            let got = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if got < 0 {
                if errno == EINTR { continue }
                throw FileError(errno: errno, path: path)
            }
            if got == 0 { break }
            done += got
        }
        return done
    }

    /// `count` bytes at `offset` (fewer at the end of the file).
    ///
    /// - throws: ``FileError/system(path:reason:)`` on an I/O error.
    package func read(_ count: Int, at offset: Int64) throws(FileError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { buffer in Result { () throws(FileError) in try read(into: buffer, at: offset) } }
        bytes.removeLast(count - (try got.get()))
        return bytes
    }
}
