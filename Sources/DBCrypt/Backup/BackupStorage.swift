import Foundation
import Synchronization

/// Where a continuous backup keeps its objects: a flat namespace of named,
/// immutable objects, written whole or not at all. Objects hold encrypted
/// pages and records authenticated with the database's key, so a place that
/// cannot be trusted with the data can hold them.
///
/// The four operations are those every object store has: a directory
/// (``DirectoryBackupStorage``, on another disk or a mounted share) and a
/// bucket in S3-compatible storage (`S3BackupStorage`, in DBCryptS3: S3's
/// `PutObject`, `GetObject`, `ListObjectsV2` and `DeleteObjects`; an upload
/// is atomic there, as the rename is here).
///
/// ```swift
/// let storage = try DirectoryBackupStorage(path: "/mnt/backup/notes")
/// ```
public protocol BackupStorage: Sendable {
    /// Stores `data` under `name`, durably, before returning: a crash after
    /// it returns keeps the object; a crash before leaves no object, or the
    /// whole one. An existing object of that name is never replaced.
    ///
    /// - throws: ``BackupError/objectExists(location:)`` when an object of
    ///   that name is there, ``BackupError/destinationFull(location:)`` when
    ///   there is no room, ``BackupError/destinationInUse(location:)`` when
    ///   this writer's claim was taken over (a continuous backup then ends),
    ///   ``BackupError/storageRefused(location:reason:)`` when the
    ///   destination refuses for good, ``BackupError/storageFailed(location:reason:)`` otherwise.
    func put(_ name: String, _ data: Data) throws
    /// Makes the caller the destination's one writer until the claim is
    /// released, or its process ends (a writer killed leaves no claim
    /// behind). Readers claim nothing.
    ///
    /// - throws: ``BackupError/destinationInUse(location:)`` when another
    ///   writer holds it, ``BackupError/storageFailed(location:reason:)`` otherwise.
    func claimWriting() throws -> BackupWriterClaim
    /// The object named `name`.
    ///
    /// - throws: ``BackupError/objectNotFound(location:)`` when there is none
    ///   (a restore lists again: a backup may have pruned it meanwhile),
    ///   ``BackupError/damaged(location:reason:)`` when what has that name is
    ///   not an object (a directory's entry that is not a regular file),
    ///   ``BackupError/storageFailed(location:reason:)`` otherwise.
    func get(_ name: String) throws -> Data
    /// The names of every object, in no particular order.
    ///
    /// - throws: ``BackupError/storageFailed(location:reason:)``.
    func list() throws -> [String]
    /// Removes the object named `name`; removing one that is not there does nothing.
    ///
    /// - throws: ``BackupError/storageFailed(location:reason:)``.
    func delete(_ name: String) throws
    /// Removes the objects named `names`, in one request where the storage
    /// has one (S3's `DeleteObjects`); names not there are skipped.
    ///
    /// - throws: ``BackupError/storageRefused(location:reason:)`` when the
    ///   destination refuses (a user that may not delete),
    ///   ``BackupError/storageFailed(location:reason:)`` otherwise; some may be removed already.
    func delete(_ names: [String]) throws
    /// Where the objects are, for messages: a path or a URL, never a credential.
    var location: String { get }
}

extension BackupStorage {
    /// Removes each object of `names`, one at a time.
    public func delete(_ names: [String]) throws {
        for name in names { try delete(name) }
    }

    /// What `open` makes of the first object of `names` it accepts, fetched
    /// in order; nil when objects were read and none was accepted (another
    /// key's records, or damaged ones). A key is called wrong only then:
    /// when no object could be read at all, the storage's error says why.
    ///
    /// - throws: the error of the last fetch when no fetch succeeded, or what `open` throws.
    func firstOpened<T>(_ names: [String], _ open: (Data, String) throws -> T?) throws -> T? {
        var failure: Error?
        var anyRead = false
        for name in names {
            let object: Data
            do {
                object = try get(name)
            } catch {
                failure = error
                continue
            }
            anyRead = true
            if let opened = try open(object, name) { return opened }
        }
        if !anyRead, let failure { throw failure }
        return nil
    }
}

/// The names a backup gives its objects.
package enum BackupObjectName {
    /// `name`, when it is letters, digits, `-`, `_` and `.`, not starting
    /// with `.`: a name is never a path, nor a key outside a prefix.
    ///
    /// - throws: ``BackupError/storageFailed(location:reason:)`` for any other name.
    package static func valid(_ name: String) throws -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
        guard !name.isEmpty, !name.hasPrefix("."), name.allSatisfy({ allowed.contains($0) }) else {
            throw BackupError.storageFailed(location: name, reason: "it is not an object name")
        }
        return name
    }
}

/// A destination's one writer, until ``release()`` (or deinit).
public final class BackupWriterClaim: Sendable {
    private let releasing: Mutex<(@Sendable () -> Void)?>

    /// A claim that `release` gives back, once.
    public init(release: @escaping @Sendable () -> Void) { releasing = Mutex(release) }

    /// Gives the claim back; a second call does nothing.
    public func release() {
        let release = releasing.withLock { value in
            defer { value = nil }
            return value
        }
        release?()
    }

    deinit { release() }
}

/// A ``BackupStorage`` in a directory: each object is a file, mode 0600,
/// written to a temporary name beside it (a name starting with `.`, which
/// ``list()`` skips), flushed to disk, linked into place (never over an
/// object), and the directory flushed, so that an object is there whole or
/// not at all. The writer's claim is an exclusive `flock` on the file
/// `.dbcrypt-writer` in the directory, which the system releases when its
/// process ends.
///
/// Reading changes nothing in the directory. The first ``put(_:_:)`` of a
/// process removes the temporaries of writers that died, and only those:
/// names this type makes, whose process is gone.
public struct DirectoryBackupStorage: BackupStorage {
    /// The directory.
    public let path: String
    public var location: String { path }
    /// Whether this process has swept the directory for dead writers' temporaries.
    private let swept = SweptOnce()

    /// Uses the directory at `path`, made (mode 0700) when missing.
    ///
    /// - throws: ``BackupError/storageFailed(location:reason:)`` when it
    ///   cannot be made, or is not a directory.
    public init(path: String) throws {
        self.path = path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw BackupError.storageFailed(location: path, reason: "it is not a directory") }
        } else {
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw BackupError.storageFailed(location: path, reason: "the directory cannot be made: \(Self.reason(error))")
            }
        }
    }

    public func put(_ name: String, _ data: Data) throws {
        try Self.requireValid(name)
        if swept.first() { SiblingFile.removeAbandoned(in: path) }
        do throws(FileError) {
            let temporary = try SiblingFile.create(beside: objectPath(name))
            var written = false
            defer { if !written { temporary.remove() } }
            try temporary.fill(with: data)
            try temporary.sync()
            try placeWithoutReplacing(temporary.path, as: name)
            written = true
            try DurableWrite.syncDirectory(of: objectPath(name))
        } catch .exists(let location) {
            throw BackupError.objectExists(location: location)
        } catch .noSpace, .fileSizeLimit {
            throw BackupError.destinationFull(location: path)
        } catch {
            throw BackupError.storageFailed(location: objectPath(name), reason: error.reason)
        }
    }

    public func claimWriting() throws -> BackupWriterClaim {
        let fd = open(objectPath(".dbcrypt-writer"), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw BackupError.storageFailed(location: path, reason: String(cString: strerror(errno))) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(fd)
            if code == EAGAIN { throw BackupError.destinationInUse(location: path) }
            throw BackupError.storageFailed(location: path, reason: String(cString: strerror(code)))
        }
        return BackupWriterClaim { close(fd) }
    }

    /// Puts the written `temporary` in place as `name`: a hard link, which
    /// fails on an existing name, then the temporary's removal. Where the
    /// file system has no hard links (FAT, some shares), a rename after
    /// checking that the name is free: the writer's claim keeps other
    /// writers of DBCrypt out meanwhile.
    private func placeWithoutReplacing(_ temporary: String, as name: String) throws(FileError) {
        let target = objectPath(name)
        if link(temporary, target) == 0 {
            unlink(temporary)
            return
        }
        let code = errno
        guard code == EPERM || code == EOPNOTSUPP || code == EMLINK else { throw FileError(errno: code, path: target) }
        var status = stat()
        guard lstat(target, &status) != 0, errno == ENOENT else { throw .exists(path: target) }
        guard rename(temporary, target) == 0 else { throw FileError(errno: errno, path: target) }
    }

    public func get(_ name: String) throws -> Data {
        try Self.requireValid(name)
        let location = objectPath(name)
        do {
            // Never blocks on a FIFO, never reads a directory or a device.
            let reader = try FileReader(path: location)
            let bytes = try reader.read(Int(reader.size), at: 0)
            return Data(bytes)
        } catch .notFound {
            throw BackupError.objectNotFound(location: location)
        } catch .system(_, let reason) {
            throw BackupError.storageFailed(location: location, reason: reason)
        } catch .permissionDenied {
            throw BackupError.storageFailed(location: location, reason: "permission denied")
        } catch {
            // A directory, a FIFO, a device: junk, not an object.
            throw BackupError.damaged(location: location, reason: error.reason)
        }
    }

    public func list() throws -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: path).filter { !$0.hasPrefix(".") }
        } catch {
            throw BackupError.storageFailed(location: path, reason: Self.reason(error))
        }
    }

    public func delete(_ name: String) throws {
        try Self.requireValid(name)
        guard unlink(objectPath(name)) == 0 || errno == ENOENT else {
            throw BackupError.storageFailed(location: objectPath(name), reason: String(cString: strerror(errno)))
        }
    }

    /// Whether `path`, a file to write (through its links, when it is one),
    /// lies in this directory or below it.
    func contains(_ path: String) -> Bool {
        func resolved(_ path: String) -> String? {
            guard let full = realpath(path, nil) else { return nil }
            defer { free(full) }
            return String(cString: full)
        }
        guard let root = resolved(self.path) else { return false }
        let parent = (path as NSString).deletingLastPathComponent
        guard let file = resolved(path) ?? resolved(parent.isEmpty ? "." : parent).map({ $0 + "/" }) else { return false }
        return file.hasPrefix(root.hasSuffix("/") ? root : root + "/")
    }

    private func objectPath(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    private static func requireValid(_ name: String) throws { _ = try BackupObjectName.valid(name) }

    private static func reason(_ error: Error) -> String {
        (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
    }
}

/// True the first time it is asked, then false: a once-per-value flag that
/// copies of a `Sendable` struct share.
private final class SweptOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false

    func first() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        defer { done = true }
        return !done
    }
}
