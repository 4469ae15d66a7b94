import Dispatch
import Synchronization

/// Notices commits made to the file through other connections (another
/// process, another queue or pool on the same path), which the writer's
/// hooks never hear of. While at least one observation asks for it, it
/// reads `PRAGMA data_version` on the writer's connection, on the writer's
/// queue, at the shortest interval asked for. SQLite changes that number
/// when a connection other than the one reading it commits, so the
/// writer's own commits (reported by its hooks) do not count twice.
///
/// A tick costs a shared lock and a look at the WAL index or the file's
/// change counter: no page is read or decrypted.
final class OtherConnectionsPoller: Sendable {
    private struct State {
        var intervals: [ObjectIdentifier: Duration] = [:]
        var timer: DispatchSourceTimer?
        var timerInterval: Duration?
        var lastSeen: (connection: ObjectIdentifier, version: Int)?
    }
    private let state = Mutex(State())

    /// The writer's serial queue: every tick runs there.
    private let queue: DispatchQueue
    /// Reads the writer's data version, on `queue`: which connection, and its
    /// number; nil when there is nothing to poll any more (closed, released),
    /// which stops the polling.
    private let readVersion: @Sendable () -> (connection: ObjectIdentifier, version: Int?)?
    /// Told after a tick saw another connection's commit.
    private let changed: @Sendable () -> Void

    init(queue: DispatchQueue,
         readVersion: @escaping @Sendable () -> (connection: ObjectIdentifier, version: Int?)?,
         changed: @escaping @Sendable () -> Void) {
        self.queue = queue
        self.readVersion = readVersion
        self.changed = changed
    }

    deinit { state.withLock { $0.timer?.cancel() } }

    /// Polls every `interval` for `observer`, at the shortest interval any
    /// observer asks for, then calls `started` (on `queue`). The version
    /// read before `started` is the one later ticks compare with: a fetch
    /// that begins after it misses no commit.
    func start(every interval: Duration, for observer: ObjectIdentifier, started: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            let reading = readVersion()
            state.withLock { state in
                if state.lastSeen == nil, let reading, let version = reading.version { state.lastSeen = (reading.connection, version) }
                state.intervals[observer] = interval
                reschedule(&state)
            }
            started()
        }
    }

    /// Stops polling for `observer`; the timer stops when no observer asks for it.
    func stop(for observer: ObjectIdentifier) {
        state.withLock { state in
            state.intervals[observer] = nil
            reschedule(&state)
        }
    }

    /// Under `state`'s lock: runs the timer at the shortest interval asked for, or stops it.
    private func reschedule(_ state: inout State) {
        let shortest = state.intervals.values.min()
        guard shortest != state.timerInterval else { return }
        state.timer?.cancel()
        state.timer = nil
        state.timerInterval = shortest
        guard let shortest else {
            state.lastSeen = nil
            return
        }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let nanoseconds = Int(shortest.components.seconds) * 1_000_000_000 + Int(shortest.components.attoseconds / 1_000_000_000)
        let period = DispatchTimeInterval.nanoseconds(max(nanoseconds, 1_000_000))
        timer.schedule(deadline: .now() + period, repeating: period, leeway: .nanoseconds(max(nanoseconds / 10, 100_000)))
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
        state.timer = timer
    }

    /// Whether a timer runs, for tests.
    var isPolling: Bool {
        state.withLock { $0.timer != nil }
    }

    /// On `queue`: compares the writer's data version with the one seen last.
    private func tick() {
        guard let (connection, version) = readVersion() else {
            // Closed or released: nothing more to notice.
            state.withLock { state in
                state.intervals.removeAll()
                reschedule(&state)
            }
            return
        }
        // A failed read (the file busy past the timeout) is tried again next tick.
        guard let version else { return }
        let isChange = state.withLock { state -> Bool in
            // With no baseline (the first read failed) or another connection
            // (the writer reopened after a key change), the numbers cannot be
            // compared: a commit may have come in between, so fetch again.
            let isChange = state.lastSeen.map { $0.connection != connection || $0.version != version } ?? true
            state.lastSeen = (connection, version)
            return isChange
        }
        if isChange { changed() }
    }
}

extension Database {
    /// For ``OtherConnectionsPoller``, on the connection's queue: the
    /// connection and its `PRAGMA data_version` (nil when it could not be
    /// read); nil once the connection is closed.
    func dataVersionReading() -> (connection: ObjectIdentifier, version: Int?)? {
        guard !isClosed else { return nil }
        return (ObjectIdentifier(self), try? fetchScalar(Int.self, "PRAGMA data_version"))
    }
}
