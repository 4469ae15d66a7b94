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

    /// A new file that could not be made or written, in this library's terms.
    init(writing error: FileError) {
        switch error {
        case let .exists(path): self = .destinationExists(path: path)
        default: self = .cannotWrite(path: error.path, reason: error.reason)
        }
    }
}

/// A new file at `path`, with its errors in this library's terms.
///
/// - throws: ``SQLCipherFormatError/destinationExists(path:)`` or ``SQLCipherFormatError/cannotWrite(path:reason:)``.
func newFile(_ path: String) throws -> FileWriter {
    do throws(FileError) {
        return try FileWriter(creating: path)
    } catch {
        throw SQLCipherFormatError(writing: error)
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
