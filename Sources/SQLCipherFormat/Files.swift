import DBCryptCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file this library reads: the core's `FileReader` (which keeps the
/// process's locks), with its errors as ``SQLCipherFormatError``.
struct SourceFile {
    private let file: FileReader

    /// Opens `path` read-only.
    ///
    /// - throws: ``SQLCipherFormatError/fileNotFound(path:)``, or
    ///   ``SQLCipherFormatError/cannotRead(path:reason:)`` for a directory, a
    ///   device or an unreadable file.
    init(path: String) throws {
        do {
            file = try FileReader(path: path)
        } catch {
            throw SQLCipherFormatError(error)
        }
    }

    /// The path it was opened by.
    var path: String { file.path }
    /// The file's size in bytes when it was opened.
    var size: Int64 { file.size }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at the end of the file.
    ///
    /// - throws: ``SQLCipherFormatError/cannotRead(path:reason:)`` on an I/O error.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        do {
            return try file.read(into: buffer, at: offset)
        } catch {
            throw SQLCipherFormatError(error)
        }
    }

    /// `count` bytes at `offset` (fewer at the end of the file).
    ///
    /// - throws: ``SQLCipherFormatError/cannotRead(path:reason:)`` on an I/O error.
    func read(_ count: Int, at offset: Int64) throws -> [UInt8] {
        do {
            return try file.read(count, at: offset)
        } catch {
            throw SQLCipherFormatError(error)
        }
    }
}

extension SQLCipherFormatError {
    /// A file that could not be opened or read, in this library's terms.
    init(_ error: FileError) {
        switch error {
        case let .notFound(path): self = .fileNotFound(path: path)
        default: self = .cannotRead(path: error.path, reason: error.reason)
        }
    }
}

/// Runs `body`, which reads through the core, with a file it cannot read
/// thrown as ``SQLCipherFormatError``.
@discardableResult
func readingFiles<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as FileError {
        throw SQLCipherFormatError(error)
    }
}

/// A new file written front to back, then flushed to the disk.
final class FileWriter {
    let path: String
    private var fd: Int32
    private var offset: Int64 = 0

    /// Whether this writer created the file (and so removes it on failure).
    private let created: Bool

    /// Creates `path` with mode 0600, or opens it if it exists and is empty
    /// (a sibling file made for an atomic replacement); never follows a link.
    ///
    /// - throws: ``SQLCipherFormatError/destinationExists(path:)`` when a
    ///   non-empty file is there, or ``SQLCipherFormatError/cannotWrite(path:reason:)``.
    init(creating path: String) throws {
        self.path = path
        var fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        var created = true
        if fd < 0 && errno == EEXIST {
            fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
            created = false
            var info = stat()
            if fd >= 0 && (fstat(fd, &info) != 0 || info.st_mode & S_IFMT != S_IFREG || info.st_size != 0) {
                close(fd)
                throw SQLCipherFormatError.destinationExists(path: path)
            }
        }
        guard fd >= 0 else {
            let code = errno
            if code == EEXIST || code == ELOOP { throw SQLCipherFormatError.destinationExists(path: path) }
            throw SQLCipherFormatError.cannotWrite(path: path, reason: String(cString: strerror(code)))
        }
        self.fd = fd
        self.created = created
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Appends `bytes`.
    ///
    /// - throws: ``SQLCipherFormatError/cannotWrite(path:reason:)`` (a full disk among others).
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let put = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if put < 0 {
                if errno == EINTR { continue }
                throw SQLCipherFormatError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
            }
            done += put
        }
        offset += Int64(done)
    }

    /// Flushes the file to the disk and closes it.
    ///
    /// - throws: ``SQLCipherFormatError/cannotWrite(path:reason:)``.
    func finish() throws {
        defer { close(fd); fd = -1 }
        guard fsync(fd) == 0 else { throw SQLCipherFormatError.cannotWrite(path: path, reason: String(cString: strerror(errno))) }
    }

    /// Undoes the writing: deletes the file this writer created, or empties
    /// the one it was given. For a run that failed or was cancelled.
    func discard() {
        if fd >= 0 {
            if !created { _ = ftruncate(fd, 0) }
            close(fd)
            fd = -1
        }
        if created { unlink(path) }
    }
}
