import Foundation

/// The files this process has open with
/// ``Database/Options/exclusiveToThisProcess``, by device and inode (so by
/// any path or link). A connection to one of them without the option would
/// take and release ordinary POSIX locks, which replace the process's
/// exclusive lock: so it is refused.
final class ExclusiveFiles: @unchecked Sendable {
    // @unchecked: `counts` is touched under `lock` only.

    /// A file's identity.
    struct ID: Hashable {
        let device: UInt64
        let inode: UInt64

        /// The identity of the file at `path` (a link's target), or nil when there is none.
        init?(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    static let shared = ExclusiveFiles()
    private let lock = NSLock()
    /// How many open connections hold each file.
    private var counts: [ID: Int] = [:]

    /// Whether a connection of this process holds the file at `path` exclusively.
    func contains(_ path: String) -> Bool {
        guard let id = ID(path) else { return false }
        lock.lock()
        defer { lock.unlock() }
        return counts[id] != nil
    }

    /// Records one more connection holding `id`.
    func add(_ id: ID) {
        lock.lock()
        counts[id, default: 0] += 1
        lock.unlock()
    }

    /// Records that a connection holding `id` closed.
    func remove(_ id: ID) {
        lock.lock()
        if let count = counts[id] { counts[id] = count > 1 ? count - 1 : nil }
        lock.unlock()
    }
}
