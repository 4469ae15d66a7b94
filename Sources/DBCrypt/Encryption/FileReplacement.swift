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
        let target = replacement.path
        if !inPlace && FileManager.default.fileExists(atPath: target) && !options.replaceExisting {
            throw DatabaseError.destinationExists(path: destination)
        }
        SiblingFile.removeAbandoned(beside: target)
        let sibling = try SiblingFile.create(beside: target, keepingOwnerAndModeOf: inPlace ? target : nil)
        var replaced = false
        defer { if !replaced { sibling.remove() } }
        try write(sibling.path)
        try sibling.sync()
        try check(sibling.path)
        if options.cancellation?.isCancelled == true { throw DatabaseError.cancelled }
        try replacement.requireUnchanged()
        try sibling.replaceDestination()
        replaced = true
    }
}

/// The file a routine writes, as the user means it (decision 10): for an
/// in-place routine a symbolic link's target, which this user may write and
/// which has no other names (unless allowed), and which must still be there
/// when the new copy replaces it; otherwise an existing destination's
/// target, which must not be the source by any name.
struct Replacement {
    /// The path to write.
    let path: String
    /// The in-place file's identity when it was resolved.
    private let identity: FileIdentity?

    /// Resolves `destination`.
    ///
    /// - throws: ``DatabaseError/permissionDenied(path:)``, ``DatabaseError/hardLinked(path:links:)``,
    ///   ``DatabaseError/destinationIsSource(path:)``, ``DatabaseError/fileNotFound(path:)``,
    ///   ``DatabaseError/cannotOpen(path:reason:)``.
    init(destination: String, inPlace: Bool, source: String?, options: ExportOptions) throws {
        if inPlace {
            path = try FilePaths.target(of: destination)
            guard access(path, W_OK) == 0 else { throw DatabaseError.permissionDenied(path: path) }
            let links = FilePaths.linkCount(of: path)
            if links > 1 && !options.replaceHardLinkedFile { throw DatabaseError.hardLinked(path: destination, links: links) }
            identity = FileIdentity(path)
        } else {
            path = try FilePaths.existingTarget(of: destination)
            if let source, FilePaths.isSameFile(source, path) { throw DatabaseError.destinationIsSource(path: destination) }
            identity = nil
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
