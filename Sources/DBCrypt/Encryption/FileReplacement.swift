import Foundation

extension DatabaseEncryption {
    /// Puts a file that `write` makes at `destination` with the routines'
    /// guarantees, for writers other than `sqlcipher_export` (DBCrypt's page
    /// reader, for one): `write` fills an empty file beside the destination
    /// (same directory, mode 0600, or the replaced file's owner and mode when
    /// `inPlace`), which is flushed to disk, handed to `check`, and only then
    /// renamed over the destination, the directory flushed after. Whenever
    /// the process dies or anything throws, the destination is as it was and
    /// the new file is gone (or removed by the next run).
    ///
    /// With `inPlace`, `destination` is an existing file that is replaced: a
    /// symbolic link's target, refused when it has other hard links unless
    /// `options.replaceHardLinkedFile`. Otherwise an existing destination is
    /// refused unless `options.replaceExisting`, and `source`, when given,
    /// must not be the destination by any name.
    ///
    /// - throws: what `write` or `check` throw; ``DatabaseError/destinationExists(path:)``,
    ///   ``DatabaseError/destinationIsSource(path:)``, ``DatabaseError/hardLinked(path:links:)``,
    ///   ``DatabaseError/permissionDenied(path:)``, ``DatabaseError/fileNotFound(path:)``,
    ///   ``DatabaseError/cannotOpen(path:reason:)`` for a step of the file system that failed.
    package static func replaceFile(at destination: String, inPlace: Bool = false, source: String? = nil,
                                   options: ExportOptions = ExportOptions(),
                                   write: (_ newFile: String) throws -> Void,
                                   check: (_ newFile: String) throws -> Void = { _ in }) throws {
        let replacement = try Replacement(destination: destination, inPlace: inPlace, source: source, options: options)
        if !inPlace && FileManager.default.fileExists(atPath: replacement.path) && !options.replaceExisting {
            throw DatabaseError.destinationExists(path: destination)
        }
        SiblingFile.removeAbandoned(beside: replacement.path)
        try replacement.replace(cancellation: options.cancellation, write: write, check: check)
    }
}

/// The file a routine writes, as the user means it (decision 10): for an
/// in-place routine a symbolic link's target, which this user may write and
/// which has no other names (unless allowed), and which must still be there
/// when the new copy replaces it; otherwise an existing destination's
/// target, which must not be the source by any name.
///
/// A database is its file and its companions, the `-journal`, `-wal` and
/// `-shm` SQLite keeps beside it: no companion of the source is ever an
/// output, nor is a file named as the companion of an existing file; and
/// the companions of a file being replaced go with it (an old `-wal` left
/// beside the new file would be laid over its pages), under the same rule
/// as the file: refused unless replacing is allowed.
struct Replacement {
    /// The path to write.
    let path: String
    /// The in-place file's identity when it was resolved.
    private let identity: FileIdentity?
    /// Whether the routine rewrites the file in place.
    private let inPlace: Bool

    /// Resolves `destination`.
    ///
    /// - throws: ``DatabaseError/permissionDenied(path:)``, ``DatabaseError/hardLinked(path:links:)``,
    ///   ``DatabaseError/destinationIsSource(path:)``, ``DatabaseError/fileNotFound(path:)``,
    ///   ``DatabaseError/cannotOpen(path:reason:)``, ``DatabaseError/databaseInUse(path:)``
    ///   for a destination another process has open.
    init(destination: String, inPlace: Bool, source: String?, options: ExportOptions) throws {
        self.inPlace = inPlace
        if inPlace {
            path = try FilePaths.target(of: destination)
            guard access(path, W_OK) == 0 else { throw DatabaseError.permissionDenied(path: path) }
            let links = FilePaths.linkCount(of: path)
            if links > 1 && !options.replaceHardLinkedFile { throw DatabaseError.hardLinked(path: destination, links: links) }
            identity = FileIdentity(path)
        } else {
            path = try FilePaths.existingTarget(of: destination)
            if let source, CompanionFile.isDatabaseOrCompanion(path, of: source) { throw DatabaseError.destinationIsSource(path: destination) }
            for companion in CompanionFile.allCases {
                guard path.hasSuffix(companion.rawValue) else { continue }
                let owner = String(path.dropLast(companion.rawValue.count))
                if let source, FilePaths.isSameFile(source, owner) { throw DatabaseError.destinationIsSource(path: destination) }
                var info = stat()
                if stat(owner, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG {
                    throw DatabaseError.cannotOpen(path: destination, reason: "it is named as the \(companion.rawValue) of \(owner), which SQLite would take it for: choose another name")
                }
            }
            if !options.replaceExisting, let companion = Self.companions(of: path).first(where: { FileManager.default.fileExists(atPath: $0) }) {
                throw DatabaseError.destinationExists(path: companion)
            }
            identity = nil
            try requireNotInUse(naming: destination)
        }
    }

    /// Throws when another process has the database about to be replaced
    /// open (in WAL mode), or is in a transaction on it: its writes would go
    /// on into the replaced file, and be lost. A connection in rollback
    /// mode between transactions holds no lock, and is not seen.
    ///
    /// - throws: ``DatabaseError/databaseInUse(path:)`` naming `destination`.
    func requireNotInUse(naming destination: String) throws {
        guard inPlace || SQLiteLocks.holder(of: path) == nil else { throw DatabaseError.databaseInUse(path: destination) }
    }

    /// Replaces the file at ``path`` with one that `write` fills, with the
    /// routines' guarantees, through the core's one replacement sequence
    /// (``DBCryptCore/SiblingFile/replace(_:keepingOwnerAndModeOf:write:check:)``:
    /// in place, the new file gets the replaced one's owner and mode).
    /// Before the rename, cancellation is looked at (after the flush and
    /// after `check`), the in-place file must still be the one resolved, a
    /// replaced file must not be open in another process, and the
    /// companions of a replaced file go.
    ///
    /// - throws: what `write` or `check` throw; ``DatabaseError/cancelled``;
    ///   ``DatabaseError/databaseInUse(path:)``;
    ///   ``DatabaseError`` for a step of the file system that failed.
    func replace(cancellation: JobCancellation?, write: (_ newFile: String) throws -> Void,
                 check: (_ newFile: String) throws -> Void) throws {
        do {
            try SiblingFile.replace(path, keepingOwnerAndModeOf: inPlace ? path : nil, write: { try write($0.path) }, check: { sibling in
                if cancellation?.isCancelled == true { throw DatabaseError.cancelled }
                try check(sibling.path)
                if cancellation?.isCancelled == true { throw DatabaseError.cancelled }
                try requireUnchanged()
                try requireNotInUse(naming: path)
                try removeCompanions()
            })
        } catch let error as FileError {
            throw DatabaseError(error)
        }
    }

    /// The paths of `path`'s companions.
    static func companions(of path: String) -> [String] { CompanionFile.allCases.map { $0.path(of: path) } }

    /// Removes the companions of the file about to be replaced (not of an
    /// in-place file, whose routine folds its log in first), just before the
    /// new file takes its place: a new file must never meet an old log. A
    /// process killed between the two leaves the old file without them; it
    /// was being replaced.
    ///
    /// - throws: ``DatabaseError/cannotOpen(path:reason:)`` when one exists and cannot be removed.
    func removeCompanions() throws {
        guard !inPlace else { return }
        for companion in Self.companions(of: path) where unlink(companion) != 0 && errno != ENOENT {
            throw DatabaseError.cannotOpen(path: companion, reason: "removing it before the new file replaces its database failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Throws unless the in-place file is still the one at ``path``: another
    /// program may have renamed a file over the path meanwhile, and replacing
    /// that one would lose it.
    ///
    /// - throws: ``DatabaseError/verificationFailed(path:reason:)``.
    func requireUnchanged() throws {
        guard let identity else { return }
        guard FileIdentity(path) == identity else {
            throw DatabaseError.verificationFailed(path: path, reason: "another file took its place while it was being rewritten")
        }
    }
}
