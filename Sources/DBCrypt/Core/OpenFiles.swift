import Foundation

/// Database files this process has connections to, by device and inode (so
/// by any path or link), with how many.
///
/// - ``exclusive``: those opened with ``Database/Options/exclusiveToThisProcess``.
///   A connection to one of them without the option would take and release
///   ordinary POSIX locks, which replace the process's exclusive lock: so it
///   is refused.
/// - ``all``: every file a connection opened. The `-wal` beside a file this
///   process has open is a live log, checked when the first connection opened.
final class OpenFiles: @unchecked Sendable {
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

    /// The files held with ``Database/Options/exclusiveToThisProcess``.
    static let exclusive = OpenFiles()
    /// Every file a connection of this process has open.
    static let all = OpenFiles()
    private let lock = NSLock()
    /// How many open connections hold each file.
    private var counts: [ID: Int] = [:]

    /// Whether a connection of this process has the file at `path` open (or
    /// is opening it); when none has, `probe`'s answer, with `probe` run
    /// under the registry's lock, so that no connection of this process
    /// opens the file meanwhile (`probe` may open and close the file's
    /// `-shm` directly, which drops the process's locks on it).
    func contains(_ path: String, orElse probe: () -> Bool) -> Bool {
        guard let id = ID(path) else { return probe() }
        lock.lock()
        defer { lock.unlock() }
        return counts[id] != nil || probe()
    }

    /// Whether a connection of this process holds the file at `path`.
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
