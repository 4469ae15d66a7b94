#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a file is, from its header alone, without a key.
///
/// ```swift
/// switch try FileFormat.detect(at: path) {
/// case .plaintext: print("not encrypted yet")
/// case .notPlaintext: print("encrypted, or not a database")
/// case .missing, .empty: print("nothing there yet")
/// }
/// ```
public enum FileFormat: Equatable, Sendable {
    /// No file at the path.
    case missing
    /// A file of zero bytes, which SQLite and SQLCipher treat as a new database.
    case empty
    /// A plaintext SQLite database: its header starts `SQLite format 3\0`.
    case plaintext(pageSize: Int, userVersion: Int32)
    /// Anything else: an encrypted database (SQLCipher's header is random
    /// salt) or a file that is not a database. Only a key tells which.
    case notPlaintext

    /// The 16 bytes every plaintext SQLite database starts with.
    static let sqliteMagic: [UInt8] = Array("SQLite format 3".utf8) + [0]

    /// Reads the first 100 bytes of the file at `path`.
    ///
    /// - throws: ``DatabaseError/isDirectory(path:)``,
    ///   ``DatabaseError/permissionDenied(path:)``, or
    ///   ``DatabaseError/cannotOpen(path:reason:)`` for other system errors.
    public static func detect(at path: String) throws -> FileFormat {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            switch errno {
            case ENOENT: return .missing
            case EACCES, EPERM: throw DatabaseError.permissionDenied(path: path)
            case let code: throw DatabaseError.cannotOpen(path: path, reason: String(cString: strerror(code)))
            }
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw DatabaseError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw DatabaseError.isDirectory(path: path) }
        var header = [UInt8](repeating: 0, count: 100)
        var filled = 0
        while filled < header.count {
            let n = header.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                let code = errno
                if code == EISDIR { throw DatabaseError.isDirectory(path: path) }
                throw DatabaseError.cannotOpen(path: path, reason: String(cString: strerror(code)))
            }
            if n == 0 { break }
            filled += n
        }
        if filled == 0 { return .empty }
        guard filled >= 16, Array(header[0..<16]) == sqliteMagic else { return .notPlaintext }
        let rawPageSize = filled >= 18 ? Int(header[16]) << 8 | Int(header[17]) : 0
        let userVersion = filled >= 64
            ? Int32(bitPattern: UInt32(header[60]) << 24 | UInt32(header[61]) << 16 | UInt32(header[62]) << 8 | UInt32(header[63]))
            : 0
        return .plaintext(pageSize: rawPageSize == 1 ? 65536 : rawPageSize, userVersion: userVersion)
    }
}
