import Foundation

/// Where a continuous backup keeps its objects: a flat namespace of named,
/// immutable objects, written whole or not at all. Objects hold encrypted
/// pages and records authenticated with the database's key, so a place that
/// cannot be trusted with the data can hold them.
///
/// The four operations are those every object store has: a directory
/// (``DirectoryBackupStorage``, on another disk or a mounted share) is the
/// first implementation; S3's `PutObject`, `GetObject`, `ListObjectsV2` and
/// `DeleteObject` map one to one (an upload is atomic there, as the rename
/// is here).
///
/// ```swift
/// let storage = try DirectoryBackupStorage(path: "/mnt/backup/notes")
/// ```
public protocol BackupStorage: Sendable {
    /// Stores `data` under `name`, durably, before returning: a crash after
    /// it returns keeps the object; a crash before leaves no object, or the
    /// whole one. An existing object of that name is replaced.
    ///
    /// - throws: ``BackupError/destinationFull(location:)`` when there is no
    ///   room, ``BackupError/storageFailed(location:reason:)`` otherwise.
    func put(_ name: String, _ data: Data) throws
    /// The object named `name`.
    ///
    /// - throws: ``BackupError/storageFailed(location:reason:)``, also when there is none.
    func get(_ name: String) throws -> Data
    /// The names of every object, in no particular order.
    ///
    /// - throws: ``BackupError/storageFailed(location:reason:)``.
    func list() throws -> [String]
    /// Removes the object named `name`; removing one that is not there does nothing.
    ///
    /// - throws: ``BackupError/storageFailed(location:reason:)``.
    func delete(_ name: String) throws
    /// Where the objects are, for messages: a path or a URL, never a credential.
    var location: String { get }
}

/// A ``BackupStorage`` in a directory: each object is a file, mode 0600,
/// written to a temporary name beside it (a name starting with `.`, which
/// ``list()`` skips), flushed to disk, renamed into place, and the directory
/// flushed, so that an object is there whole or not at all.
public struct DirectoryBackupStorage: BackupStorage {
    /// The directory.
    public let path: String
    public var location: String { path }

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
        removeAbandonedTemporaries()
    }

    public func put(_ name: String, _ data: Data) throws {
        try Self.requireValid(name)
        let temporary = objectPath(".\(name).\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure(errno, writing: name) }
        var written = false
        defer {
            if !written { unlink(temporary) }
        }
        do {
            defer { close(fd) }
            try data.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                    if n < 0 {
                        if errno == EINTR { continue }
                        throw failure(errno, writing: name)
                    }
                    offset += n
                }
            }
            guard fsync(fd) == 0 else { throw failure(errno, writing: name) }
        }
        guard rename(temporary, objectPath(name)) == 0 else { throw failure(errno, writing: name) }
        written = true
        let directory = open(path, O_RDONLY | O_CLOEXEC)
        guard directory >= 0 else { throw failure(errno, writing: name) }
        defer { close(directory) }
        guard fsync(directory) == 0 else { throw failure(errno, writing: name) }
    }

    public func get(_ name: String) throws -> Data {
        try Self.requireValid(name)
        guard let data = FileManager.default.contents(atPath: objectPath(name)) else {
            throw BackupError.storageFailed(location: objectPath(name), reason: "it cannot be read, or is not there")
        }
        return data
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

    private func objectPath(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    /// Names are letters, digits, `-`, `_` and `.`, not starting with `.`: a
    /// name is never a path.
    private static func requireValid(_ name: String) throws {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
        guard !name.isEmpty, !name.hasPrefix("."), name.allSatisfy({ allowed.contains($0) }) else {
            throw BackupError.storageFailed(location: name, reason: "it is not an object name")
        }
    }

    private func failure(_ code: Int32, writing name: String) -> BackupError {
        if code == ENOSPC || code == EDQUOT || code == EFBIG { return .destinationFull(location: path) }
        return .storageFailed(location: objectPath(name), reason: String(cString: strerror(code)))
    }

    /// Removes temporaries of writers that died: `.NAME.PID-RANDOM` whose process is gone.
    private func removeAbandonedTemporaries() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
        for name in names where name.hasPrefix(".") {
            guard let tail = name.split(separator: ".").last, let pidText = tail.split(separator: "-").first,
                  let pid = pid_t(pidText), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            unlink(objectPath(name))
        }
    }

    private static func reason(_ error: Error) -> String {
        (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
    }
}
