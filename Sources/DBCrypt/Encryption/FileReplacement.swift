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
    public static func replaceFile(at destination: String, inPlace: Bool = false, source: String? = nil,
                                   options: ExportOptions = ExportOptions(),
                                   write: (_ newFile: String) throws -> Void,
                                   check: (_ newFile: String) throws -> Void = { _ in }) throws {
        var target = destination
        var identity: (dev_t, ino_t)?
        if inPlace {
            target = try FilePaths.target(of: destination)
            guard access(target, W_OK) == 0 else { throw DatabaseError.permissionDenied(path: target) }
            let links = FilePaths.linkCount(of: target)
            if links > 1 && !options.replaceHardLinkedFile { throw DatabaseError.hardLinked(path: destination, links: links) }
            identity = FilePaths.identity(of: target)
        } else {
            target = try FilePaths.existingTarget(of: destination)
            if let source, FilePaths.isSameFile(source, target) { throw DatabaseError.destinationIsSource(path: destination) }
            if FileManager.default.fileExists(atPath: target) && !options.replaceExisting {
                throw DatabaseError.destinationExists(path: destination)
            }
        }
        SiblingFile.removeAbandoned(beside: target)
        let sibling = try SiblingFile.create(beside: target, keepingOwnerAndModeOf: inPlace ? target : nil)
        var replaced = false
        defer { if !replaced { sibling.remove() } }
        try write(sibling.path)
        try sibling.sync()
        try check(sibling.path)
        if options.cancellation?.isCancelled == true { throw DatabaseError.cancelled }
        if let identity {
            guard let now = FilePaths.identity(of: target), now == identity else {
                throw DatabaseError.verificationFailed(path: target, reason: "another file took its place while it was being rewritten")
            }
        }
        try sibling.replaceDestination()
        replaced = true
    }
}
