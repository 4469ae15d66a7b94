import Foundation

/// Which file a path names: through symbolic links, by identity (device and
/// inode), and by how many names it has.
enum FilePaths {
    /// The path of the file `path` names: `path` itself when it is not a
    /// symbolic link (so that messages name the file as the user did), else
    /// the link's target, every link resolved.
    ///
    /// - throws: ``DatabaseError/fileNotFound(path:)`` when it names no file
    ///   (a dangling link included), ``DatabaseError/cannotOpen(path:reason:)``.
    static func target(of path: String) throws -> String {
        do throws(FileError) {
            return try CompanionFile.databaseFile(path)
        } catch {
            throw DatabaseError(error)
        }
    }

    /// `path` itself when nothing is there, else the file it names.
    ///
    /// - throws: ``DatabaseError/cannotOpen(path:reason:)`` for a symbolic link
    ///   to nothing, which a new file would replace instead of filling.
    /// An existing output that is not a regular file (a device such as
    /// `/dev/null`, a FIFO, a socket, a directory) is refused, whatever
    /// replacing is allowed: a new file renamed over it would take its place.
    static func existingTarget(of path: String) throws -> String {
        var info = stat()
        guard lstat(path, &info) == 0 else { return path }
        if (info.st_mode & S_IFMT) != S_IFLNK {
            try requireRegularFile(path, info)
            return path
        }
        guard stat(path, &info) == 0 else {
            throw DatabaseError.cannotOpen(path: path, reason: "it is a symbolic link to a file that does not exist")
        }
        try requireRegularFile(path, info)
        return try target(of: path)
    }

    /// Throws unless `info` (of `path`) is a regular file's.
    ///
    /// - throws: ``DatabaseError/isDirectory(path:)``, or
    ///   ``DatabaseError/cannotOpen(path:reason:)`` naming what it is.
    static func requireRegularFile(_ path: String, _ info: stat) throws {
        if let error = FileError(mode: info.st_mode, path: path) { throw DatabaseError(error) }
    }

    /// A `file:` URI that opens `path` read as it is on disk, its `-wal`
    /// ignored (SQLite's `immutable` parameter): the path made absolute and
    /// its `%`, `?` and `#` escaped.
    static func immutableURI(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var escaped = ""
        for character in absolute {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.append(character)
            }
        }
        return "file://" + escaped + "?immutable=1"
    }

    /// Whether both paths name one existing file.
    static func isSameFile(_ a: String, _ b: String) -> Bool {
        guard let first = FileIdentity(a) else { return false }
        return FileIdentity(b) == first
    }

    /// How many names (hard links) the file at `path` has; 1 when unknown.
    static func linkCount(of path: String) -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else { return 1 }
        return Int(clamping: info.st_nlink)
    }
}
