import CSQLCipher
import Dispatch
import Foundation
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
/// truncating checkpoint, a key change, closing) runs inside ``paused(closing:_:)``,
/// or ``withNoReadOrCheckpoint(closing:_:)`` when no read may run either.
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
        /// The writer runs inside ``withNoReadOrCheckpoint(closing:_:)``.
        var isQuiet = false
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

    /// How long a RESTART in a commit waits for readers of other processes,
    /// in milliseconds: one may hold its read for as long as it likes
    /// (`dbcrypt backup continuous` always holds one), and the commit
    /// must not wait the busy timeout for it.
    static let restartWait: Int32 = 100
    /// The writer's busy timeout in milliseconds, set back after a RESTART,
    /// and how long a RESTART waits for the pool's own reads (set by the pool).
    nonisolated(unsafe) var writerBusyTimeout: Int32 = 5_000

    /// The pool's read permits: the commit that restarts the WAL takes them all.
    private let readPermits: ReadPermits

    init(readPermits: ReadPermits, open: @escaping @Sendable () throws -> Database) {
        self.readPermits = readPermits
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

    /// Set once by a pool whose continuous backup restarts the WAL itself
    /// (its read counts as one long read): ships what is left, lets go of
    /// its reads inside the function it is given, and checkpoints there
    /// (see ``ContinuousBackup/restartLog(on:withNoRead:)``).
    nonisolated(unsafe) var restartLogThroughBackup: (@Sendable (OpaquePointer, (() -> Int32) -> Int32?) -> Void)?

    /// In the commit that filled the WAL past 4,000 frames, on the writer's
    /// connection `db`: restarts the WAL with a RESTART checkpoint (or has
    /// the continuous backup do it), unless a long read other than the
    /// backup's runs, or a RESTART waited in vain not long ago. Returns
    /// whether it tried (false when the backup let the commit pass: the
    /// passive checkpoints then go on).
    ///
    /// A RESTART waits for every reader of older frames to end. Under reads
    /// without pause there is always one that began before the checkpoint
    /// copied the last frame, so the pool's own reads are let end first, and
    /// new ones wait until the checkpoint returns: up to the writer's busy
    /// timeout, as long as SQLite's RESTART would wait for them, but new
    /// reads no longer prolong the wait.
    /// Readers of other processes cannot be held off; the checkpoint waits
    /// at most ``restartWait`` for them. When either wait is in vain, the
    /// next try comes only after more frames: 16, 64, 256, 1,024, then every
    /// 4,000 (a read that outlasts them, such as another process's backup,
    /// would otherwise hold up every commit).
    func restartInCommit(_ db: OpaquePointer, walFrames frames: Int32) -> Bool {
        let throughBackup = restartLogThroughBackup
        let due = state.withLock { state -> Bool in
            if frames < state.frames { (state.restartAgainAt, state.restartFailures) = (0, 0) }  // the WAL started over
            state.frames = frames
            guard frames >= state.restartAgainAt else { return false }
            guard state.longReads == (throughBackup == nil ? 0 : 1) else {
                state.restartsSkipped += 1
                return false
            }
            return true
        }
        guard due else { return false }
        var inVain = false
        var attempted = false
        func restart(_ checkpoint: () -> Int32) -> Int32 {
            attempted = true
            sqlite3_busy_timeout(db, Self.restartWait)
            defer { sqlite3_busy_timeout(db, writerBusyTimeout) }
            let started = DispatchTime.now().uptimeNanoseconds
            let code = checkpoint()
            // SQLITE_BUSY at once is another checkpoint running: try again at the next commit.
            inVain = code == SQLITE_BUSY && (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000 >= UInt64(Self.restartWait)
            return code
        }
        // A checkpoint running here would make the RESTART busy at once: it finishes first.
        let isQuiet = state.withLock { $0.isQuiet }
        func withNoRead(_ checkpoint: () -> Int32) -> Int32? {
            if isQuiet { return restart(checkpoint) }
            return paused {
                guard readPermits.takeAll(by: Date(timeIntervalSinceNow: Double(writerBusyTimeout) / 1000)) else {
                    inVain = true
                    return nil
                }
                defer { readPermits.giveAll() }
                return restart(checkpoint)
            }
        }
        if let throughBackup {
            throughBackup(db, withNoRead)
        } else {
            _ = withNoRead { sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_RESTART, nil, nil) }
        }
        state.withLock { state in
            guard inVain else {
                // A backup that let this commit pass (a round under way) leaves the count of waits in vain.
                if attempted { state.restartFailures = 0 }
                return
            }
            state.restartFailures += 1
            state.restartAgainAt = frames + min(4 * Self.interval, Int32(16) << min(10, 2 * (state.restartFailures - 1)))
            state.restartsWaitedInVain += 1
        }
        // Not tried (the backup let this commit pass): the passive checkpoints go on.
        return attempted || inVain
    }

    /// Whether the writer runs inside ``withNoReadOrCheckpoint(closing:_:)``
    /// now, holding every read permit (asked on the writer's thread).
    var keepsReadsOut: Bool { state.withLock { $0.isQuiet } }

    /// Runs `body` once no checkpoint runs here and no read of the pool
    /// runs, and keeps new ones waiting until it returns (see ``paused(closing:_:)``).
    func withNoReadOrCheckpoint<T>(closing: Bool = false, _ body: () throws -> T) rethrows -> T {
        try paused(closing: closing) {
            readPermits.takeAll()
            state.withLock { $0.isQuiet = true }
            defer {
                state.withLock { $0.isQuiet = false }
                readPermits.giveAll()
            }
            return try body()
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
