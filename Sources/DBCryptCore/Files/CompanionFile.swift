import Foundation

/// A file SQLite keeps beside a database: its rollback journal, its
/// write-ahead log, or the log's shared-memory index.
///
/// SQLite names them after the database file itself: a database opened
/// through a symbolic link keeps them beside the link's target (SQLite
/// follows the link, and a link to it, to the file), not beside the link.
/// Every path of one is made by ``path(of:)``, so that what DBCrypt reads,
/// checks and removes is the log SQLite writes.
package enum CompanionFile: String, CaseIterable, Sendable {
    case journal = "-journal"
    case wal = "-wal"
    case shm = "-shm"

    /// This companion of the database `database` names, where SQLite keeps
    /// it. A link to nothing is taken as it is (SQLite would make the file
    /// at its target: there is no log yet to find).
    package func path(of database: String) -> String {
        ((try? Self.databaseFile(database)) ?? database) + rawValue
    }

    /// The directory the companions of the database `database` names are
    /// made and deleted in: SQLite may write there only if this process may.
    package static func directory(of database: String) -> String {
        SiblingFile.directory(of: (try? databaseFile(database)) ?? database)
    }

    /// Whether `candidate` names the database `database` names, or one of
    /// its companions: the same file by any name (a symbolic or a hard
    /// link), or, for one not made yet, the same path.
    package static func isDatabaseOrCompanion(_ candidate: String, of database: String) -> Bool {
        isNamedAsDatabaseOrCompanion(candidate, of: database) || FileIdentity(candidate).map { isDatabaseOrCompanion($0, of: database) } == true
    }

    /// Whether `candidate` is spelled as the path of the database `database`
    /// names or of one of its companions, made absolute with `.` and `..`
    /// folded: the test for a file not made yet.
    package static func isNamedAsDatabaseOrCompanion(_ candidate: String, of database: String) -> Bool {
        let spelled = URL(fileURLWithPath: candidate).standardizedFileURL.path
        return names(of: database).contains { URL(fileURLWithPath: $0).standardizedFileURL.path == spelled }
    }

    /// Whether the file `identity` names is the database `database` names,
    /// or one of its companions.
    package static func isDatabaseOrCompanion(_ identity: FileIdentity, of database: String) -> Bool {
        names(of: database).contains { FileIdentity($0) == identity }
    }

    /// The database and every companion, where SQLite keeps them.
    private static func names(of database: String) -> [String] {
        [database] + allCases.map { $0.path(of: database) }
    }

    /// The file `path` names, as SQLite opens it: `path` itself when it is
    /// not a symbolic link (so that messages name it as the user did), else
    /// the link's target, every link resolved.
    ///
    /// - throws: ``FileError`` when it is a link to nothing, or its target
    ///   cannot be resolved.
    package static func databaseFile(_ path: String) throws(FileError) -> String {
        var info = stat()
        if lstat(path, &info) == 0 && (info.st_mode & S_IFMT) != S_IFLNK { return path }
        guard let resolved = realpath(path, nil) else { throw FileError(errno: errno, path: path) }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
