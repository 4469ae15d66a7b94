import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Database files this process has connections to, by device and inode (so
/// by any path or link), with how many; and the descriptors of those files
/// that wait to be closed until the last connection is gone
/// (``FileReader``).
///
/// - ``exclusive``: those opened with DBCrypt's `exclusiveToThisProcess`.
///   A connection to one of them without the option would take and release
///   ordinary POSIX locks, which replace the process's exclusive lock: so it
///   is refused.
/// - ``all``: every file a connection opened (recorded before SQLite opens
///   it) or attached. The `-wal` beside a file this process has open is a
///   live log.
package final class OpenFiles: Sendable {
    private struct State {
        /// How many open connections hold each file.
        var counts: [FileIdentity: Int] = [:]
        /// Descriptors to close when no connection holds their file.
        var parked: [FileIdentity: [Int32]] = [:]
    }

    /// The files held with `exclusiveToThisProcess`.
    package static let exclusive = OpenFiles()
    /// Every file a connection of this process has open.
    package static let all = OpenFiles()
    private let state = Mutex(State())

    /// Whether a connection of this process has the file at `path` open (or
    /// is opening it); when none has, `probe`'s answer, with `probe` run
    /// under the registry's lock, so that no connection of this process
    /// opens the file meanwhile (`probe` may open and close the file's
    /// `-shm` directly, which drops the process's locks on it).
    package func contains(_ path: String, orElse probe: () -> Bool) -> Bool {
        guard let id = FileIdentity(path) else { return probe() }
        return state.withLock { $0.counts[id] != nil || probe() }
    }

    /// Whether a connection of this process holds the file at `path`.
    package func contains(_ path: String) -> Bool {
        guard let id = FileIdentity(path) else { return false }
        return state.withLock { $0.counts[id] != nil }
    }

    /// Whether no connection of this process holds any file.
    package var isEmpty: Bool {
        state.withLock { $0.counts.isEmpty }
    }

    /// Records one more connection holding `id`.
    package func add(_ id: FileIdentity) {
        state.withLock { $0.counts[id, default: 0] += 1 }
    }

    /// Records that a connection holding `id` closed; with the last one, the
    /// descriptors parked for the file are closed. Under the lock, so that no
    /// connection opens the file between the decision and the close.
    package func remove(_ id: FileIdentity) {
        state.withLock { state in
            guard let count = state.counts[id] else { return }
            guard count == 1 else {
                state.counts[id] = count - 1
                return
            }
            state.counts[id] = nil
            for fd in state.parked.removeValue(forKey: id) ?? [] { closeDescriptor(fd) }
        }
    }

    /// Closes `fd`, a descriptor of file `id`, now if no connection holds the
    /// file, else when the last one is gone: closing it now would drop the
    /// locks those connections hold. Under the lock, as ``remove(_:)``.
    package func close(_ fd: Int32, of id: FileIdentity) {
        state.withLock { state in
            if state.counts[id] != nil {
                state.parked[id, default: []].append(fd)
            } else {
                closeDescriptor(fd)
            }
        }
    }

    /// A descriptor of file `id` parked by ``close(_:of:)``, taken back for
    /// reading, or nil: what keeps their number at the number of readers at
    /// once, however often the file is read while it is held.
    package func takeParked(_ id: FileIdentity) -> Int32? {
        state.withLock { $0.parked[id]?.popLast() }
    }
}

/// `close(2)`, out of reach of ``OpenFiles/close(_:of:)``'s name.
private func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}

/// A file's identity: its device and inode, the same by any path or link.
package struct FileIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// The identity of the file at `path` (a link's target), or nil when there is none.
    package init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The identity of the file `info` describes.
    package init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
