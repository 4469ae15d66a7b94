#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a file could not be opened, read or written, from the system's errno:
/// the one place an errno becomes an error. Each library turns it into its
/// own public error type.
package enum FileError: Error, Equatable {
    /// Nothing at the path.
    case notFound(path: String)
    /// A directory where a file was expected.
    case isDirectory(path: String)
    /// The file or its directory may not be read.
    case permissionDenied(path: String)
    /// Something other than a regular file: `kind` names it ("a FIFO (named pipe)").
    case notRegularFile(path: String, kind: String)
    /// The file system is mounted read-only.
    case readOnlyFileSystem(path: String)
    /// The disk (or this user's quota) is full.
    case noSpace(path: String)
    /// The file would pass the process's file-size limit (`ulimit -f`).
    case fileSizeLimit(path: String)
    /// Something is already at a path that must be new.
    case exists(path: String)
    /// A new file cannot be given the owner or group of the one it replaces.
    case ownershipNotKept(path: String)
    /// The file holds more than the `limit` bytes its reader takes.
    case tooLarge(path: String, limit: Int)
    /// Any other system error: the system's own words.
    case system(path: String, reason: String)

    /// The error for `code`, an errno from opening or reading `path`.
    package init(errno code: Int32, path: String) {
        switch code {
        case ENOENT: self = .notFound(path: path)
        case EISDIR: self = .isDirectory(path: path)
        case EACCES, EPERM: self = .permissionDenied(path: path)
        case EROFS: self = .readOnlyFileSystem(path: path)
        case ENOSPC, EDQUOT: self = .noSpace(path: path)
        case EFBIG: self = .fileSizeLimit(path: path)
        case EEXIST: self = .exists(path: path)
        default: self = .system(path: path, reason: String(cString: strerror(code)))
        }
    }

    /// Nil when `mode` (`st_mode`) is a regular file's; else the error naming what it is.
    package init?(mode: mode_t, path: String) {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: self = .isDirectory(path: path)
        case S_IFCHR: self = .notRegularFile(path: path, kind: "a character device")
        case S_IFBLK: self = .notRegularFile(path: path, kind: "a block device")
        case S_IFIFO: self = .notRegularFile(path: path, kind: "a FIFO (named pipe)")
        case S_IFSOCK: self = .notRegularFile(path: path, kind: "a socket")
        default: self = .notRegularFile(path: path, kind: "not a regular file")
        }
    }

    /// The path the error is about.
    package var path: String {
        switch self {
        case let .notFound(path), let .isDirectory(path), let .permissionDenied(path), let .notRegularFile(path, _),
             let .readOnlyFileSystem(path), let .noSpace(path), let .fileSizeLimit(path), let .exists(path),
             let .ownershipNotKept(path), let .tooLarge(path, _), let .system(path, _): path
        }
    }

    /// The reason in a few words, for an error that carries one ("it is a directory").
    package var reason: String {
        switch self {
        case .notFound: "it does not exist"
        case .isDirectory: "it is a directory"
        case .permissionDenied: "permission denied"
        case let .notRegularFile(_, kind): kind == "not a regular file" ? "it is not a regular file" : "it is \(kind), not a regular file"
        // The system's own words, as a full disk has always been reported.
        case .readOnlyFileSystem: String(cString: strerror(EROFS))
        case .noSpace: String(cString: strerror(ENOSPC))
        case .fileSizeLimit: String(cString: strerror(EFBIG))
        case .exists: String(cString: strerror(EEXIST))
        case .ownershipNotKept: "its owner and group cannot be kept"
        case let .tooLarge(_, limit): "it holds more than \(limit) bytes"
        case let .system(_, reason): reason
        }
    }

    /// The same error about `path` instead: for a sibling file's error,
    /// told of the file the user named.
    package func naming(_ path: String) -> FileError {
        switch self {
        case .notFound: .notFound(path: path)
        case .isDirectory: .isDirectory(path: path)
        case .permissionDenied: .permissionDenied(path: path)
        case let .notRegularFile(_, kind): .notRegularFile(path: path, kind: kind)
        case .readOnlyFileSystem: .readOnlyFileSystem(path: path)
        case .noSpace: .noSpace(path: path)
        case .fileSizeLimit: .fileSizeLimit(path: path)
        case .exists: .exists(path: path)
        case .ownershipNotKept: .ownershipNotKept(path: path)
        case let .tooLarge(_, limit): .tooLarge(path: path, limit: limit)
        case let .system(_, reason): .system(path: path, reason: reason)
        }
    }
}
