import CSQLCipher
import Dispatch
import Synchronization

/// Copies a pool's WAL into the database file on a thread and a connection
/// of its own, so that the commit that fills the WAL does not wait for the
/// copy and its two `fdatasync`s, as it does for SQLite's own automatic
/// checkpoint (see BENCHMARKS W8).
///
/// A passive checkpoint never blocks the writer or a reader, and SQLite's
/// locks keep it safe beside them. The writer starts the WAL over at its
/// next write once a checkpoint has copied every frame. A commit made while
/// the checkpoint ran adds frames it did not copy, so under writes without
/// pause the WAL grows, checkpointed here every ``interval`` frames, until
/// the writer restarts it itself. Work that needs no checkpoint running (a
/// truncating checkpoint, a key change, closing) runs inside ``paused(closing:_:)``.
final class BackgroundCheckpointer: Sendable {
    /// A checkpoint is due once the WAL holds this many frames (SQLite's own
    /// threshold), and again each time it holds this many more.
    static let interval: Int32 = 1_000

    /// What the writer's commit must do about the WAL.
    enum Duty: Equatable {
        case nothing
        /// Checkpoint in the commit: the connection that checkpoints here did not open.
        case checkpointHere
    }

    private let queue = DispatchQueue(label: "DBCrypt.DatabasePool.checkpointer")
    /// Opens the connection that checkpoints: read-write, keyed as the readers are.
    private let open: @Sendable () throws -> Database
    private struct State {
        var isScheduled = false
        /// The last attempt to open failed: the writer checkpoints itself
        /// until an attempt (one per checkpoint due) succeeds.
        var isUnavailable = false
        /// The WAL's frames at the last commit, and where the next checkpoint is due.
        var frames: Int32 = 0
        var nextCheckpointAt = BackgroundCheckpointer.interval
        var checkpointsRun = 0
        /// Reads that hold one snapshot for long (backups) under way.
        var longReads = 0
        var restartsSkipped = 0
        /// After a RESTART that waited in vain for readers, the next is tried at this many frames.
        var restartAgainAt: Int32 = 0
        var restartFailures = 0
        var restartsWaitedInVain = 0
    }
    private let state = Mutex(State())
    /// Used on `queue` only.
    private nonisolated(unsafe) var connection: Database?

    /// How many checkpoints ran here, for tests.
    var checkpointsRun: Int { state.withLock { $0.checkpointsRun } }
    /// How many times a commit did not restart the WAL because a long read ran, for tests.
    var restartsSkipped: Int { state.withLock { $0.restartsSkipped } }
    /// How many RESTARTs waited their whole time for readers and gave up, for tests.
    var restartsWaitedInVain: Int { state.withLock { $0.restartsWaitedInVain } }

    /// How long a RESTART in a commit waits for readers of older frames,
    /// in milliseconds: a reader of another process may hold its read for
    /// as long as it likes (`dbcrypt backup --continuous` always holds one),
    /// and the commit must not wait the busy timeout for it.
    static let restartWait: Int32 = 100
    /// The writer's busy timeout in milliseconds, set back after a RESTART (set by the pool).
    nonisolated(unsafe) var writerBusyTimeout: Int32 = 5_000

    init(open: @escaping @Sendable () throws -> Database) {
        self.open = open
    }

    /// Called by each commit of the writer with the frames the WAL holds
    /// now: schedules a passive checkpoint when one is due and none waits.
    func committed(walFrames frames: Int32) -> Duty {
        let (duty, start) = state.withLock { state -> (Duty, Bool) in
            if frames < state.frames { state.nextCheckpointAt = Self.interval }  // the WAL started over
            state.frames = frames
            let duty: Duty = state.isUnavailable && frames >= Self.interval ? .checkpointHere : .nothing
            guard frames >= state.nextCheckpointAt, !state.isScheduled else { return (duty, false) }
            state.nextCheckpointAt = frames + Self.interval
            state.isScheduled = true
            return (duty, true)
        }
        if start { queue.async { self.checkpoint() } }
        return duty
    }

    private func checkpoint() {
        state.withLock { $0.isScheduled = false }
        if connection == nil {
            do {
                connection = try open()
                state.withLock { $0.isUnavailable = false }
            } catch {
                state.withLock { $0.isUnavailable = true }
                return
            }
        }
        state.withLock { $0.checkpointsRun += 1 }
        guard let db = try? connection?.connection.open() else { return }
        // Errors (SQLITE_BUSY while another checkpoint runs) leave the
        // frames for the next one; SQLite's own checkpoints ignore them too.
        sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_PASSIVE, nil, nil)
    }

    /// Runs `body`, a read that keeps one snapshot for long (a backup),
    /// while the writer's commits do not restart the WAL: a RESTART
    /// checkpoint waits for every reader of older frames to end, up to the
    /// busy timeout, and would hold up each commit that long. The WAL grows
    /// meanwhile by what is written (background checkpoints still copy the
    /// frames the read does not need) and starts over after.
    func holdingLongRead<T>(_ body: () throws -> T) rethrows -> T {
        beginLongRead()
        defer { endLongRead() }
        return try body()
    }

    /// A long read begins (a continuous backup, which always holds one): see ``holdingLongRead(_:)``.
    func beginLongRead() { state.withLock { $0.longReads += 1 } }

    /// A long read that ``beginLongRead()`` announced ends.
    func endLongRead() { state.withLock { $0.longReads -= 1 } }

    /// How the commit that filled the WAL restarts it.
    enum Restart: Equatable {
        /// A RESTART checkpoint, as usual.
        case checkpoint
        /// The continuous backup ships what is left, lets go of its read and checkpoints.
        case byTheBackup
        /// None: another long read runs, and a RESTART would wait for it.
        case skip
    }

    /// Set once by a pool whose continuous backup restarts the WAL itself
    /// (its read counts as one long read).
    nonisolated(unsafe) var backupRestartsTheLog = false
    /// What restarts the log then, on the writer's connection (set with it).
    nonisolated(unsafe) var restartLogThroughBackup: (@Sendable (OpaquePointer) -> Void)?

    /// How the commit that filled the WAL restarts it: not while a long
    /// read runs, except the continuous backup's own, which ships and lets go first.
    func restart(walFrames frames: Int32) -> Restart {
        state.withLock { state in
            if frames < state.frames { (state.restartAgainAt, state.restartFailures) = (0, 0) }  // the WAL started over
            state.frames = frames
            guard frames >= state.restartAgainAt else { return .skip }
            let others = state.longReads - (backupRestartsTheLog ? 1 : 0)
            if others == 0 { return backupRestartsTheLog ? .byTheBackup : .checkpoint }
            state.restartsSkipped += 1
            return .skip
        }
    }

    /// A RESTART checkpoint on the writer's connection `db`, in the commit
    /// that filled the WAL: it waits at most ``restartWait`` for readers of
    /// older frames, and when it waited that long in vain, the next one is
    /// tried only after more frames, up to 4,000 more (a read that outlasts
    /// it, such as another process's backup, would otherwise hold up every commit).
    func restartInCommit(_ db: OpaquePointer, walFrames frames: Int32) {
        sqlite3_busy_timeout(db, Self.restartWait)
        let started = DispatchTime.now().uptimeNanoseconds
        let code = sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_RESTART, nil, nil)
        let waited = (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        sqlite3_busy_timeout(db, writerBusyTimeout)
        state.withLock { state in
            guard code == SQLITE_BUSY, waited >= UInt64(Self.restartWait) else {
                state.restartFailures = 0
                return
            }
            // Readers that come and go let a later try through; one that
            // stays is tried again less and less often: after 16 frames,
            // 64, 256, 1,024, then every 4,000.
            state.restartFailures += 1
            state.restartAgainAt = frames + min(4 * Self.interval, Int32(16) << min(10, 2 * (state.restartFailures - 1)))
            state.restartsWaitedInVain += 1
        }
    }

    /// Runs `body` while no checkpoint runs here (one under way finishes
    /// first; those scheduled meanwhile run after). With `closing`, the
    /// connection is closed first: it reopens, with what `open` gives then,
    /// at the next checkpoint.
    func paused<T>(closing: Bool = false, _ body: () throws -> T) rethrows -> T {
        try queue.sync {
            if closing {
                connection?.close()
                connection = nil
                state.withLock { $0.isUnavailable = false }
            }
            return try body()
        }
    }
}
