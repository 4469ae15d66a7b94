import CSQLCipher
import DBCryptCore
import Dispatch
import Foundation
import Synchronization

/// Ships every commit of an encrypted database in WAL mode to a
/// ``BackupStorage``, while apps use it: the WAL's frames as SQLite wrote
/// them (pages already encrypted and authenticated by SQLCipher), and a full
/// snapshot now and then. The destination never holds a key or a plaintext
/// byte; ``restore(from:key:cipher:to:target:expecting:options:)`` rebuilds the
/// database as of any commit shipped.
///
/// ```swift
/// var options = Database.Options()
/// options.continuousBackup = .init(storage: try DirectoryBackupStorage(path: "/mnt/backup/notes"))
/// let pool = try DatabasePool(path: "notes.db", key: key, options: options)
/// ```
///
/// How no commit is lost before it is shipped: SQLite overwrites the WAL
/// only after a checkpoint copied all of it into the database file, and a
/// checkpoint copies no frame past the oldest read transaction under way.
/// The backup always holds a read transaction that began before the frames
/// it has not shipped yet were committed; each round it begins a second
/// one, ships every committed frame, and only then ends the first. So every
/// checkpoint, of any connection in any process, leaves unshipped frames in
/// the log. While the destination cannot be written, the first read stays,
/// and the WAL grows instead of losing frames.
///
/// A round runs every ``Options/interval`` (and on ``shipNow()``): it ships
/// the frames committed since the last round as one record, and when
/// ``Options/snapshotInterval`` has passed since the last snapshot, a new
/// snapshot (the database file with the log's frames applied, as of the last
/// commit shipped). Records before the newest snapshot older than
/// ``Options/retention`` are deleted.
///
/// Started again on a destination that holds a backup of this database, it
/// continues it when the WAL is the one it last shipped from; otherwise (the
/// database was checkpointed and closed meanwhile, by this app or another)
/// it begins with a new snapshot: the commits made while no backup ran are
/// not in the backup.
public final class ContinuousBackup: @unchecked Sendable {
    // @unchecked: the mutable state is used on `queue` only; `shipped` behind its mutex.

    /// How often and how much a continuous backup ships and keeps.
    public struct Options: Sendable {
        /// How often committed frames are shipped. Default: 1 second.
        public var interval: Duration = .seconds(1)
        /// How often a full snapshot is taken. Default: 1 hour.
        public var snapshotInterval: Duration = .seconds(3600)
        /// How far back a restore can go: records older than the newest
        /// snapshot older than this are deleted. Default: 7 days.
        public var retention: Duration = .seconds(7 * 86400)
        /// Called after each record shipped, with the last commit it holds,
        /// on a serial queue of the backup's own (never in a commit), in order.
        public var shipped: (@Sendable (ShippedCommit) -> Void)?
        /// Called when a round the backup runs by itself fails (the
        /// destination is full or cannot be reached), on the same queue as
        /// `shipped`; the next round tries again, and nothing is lost meanwhile.
        /// Also called with ``BackupError/receiptNotWritten(commit:path:reason:)``
        /// when a receipt could not be written to `receiptPath`.
        public var failed: (@Sendable (Error) -> Void)?
        /// A file, kept apart from the destination, that receives the
        /// receipt of each commit shipped (``ShippedCommit/receipt``), after
        /// `shipped` is called: written whole or not at all, replacing the
        /// last one. ``BackupReceipt/init(contentsOf:)`` reads it back, for
        /// a restore's `expecting`. Default: nil, no file.
        public var receiptPath: String?
        /// How large the log may grow while the destination cannot be
        /// written: until then no checkpoint copies past what is unshipped,
        /// so no commit is lost. Past it the backup lets go, reports
        /// ``BackupError/backlogTooLarge(location:bytes:)`` to `failed`, and
        /// begins with a new snapshot once the destination takes writes
        /// again; the commits made meanwhile are in that snapshot, but not
        /// each on its own. The app's commits succeed either way. Default: 1 GiB.
        public var maximumBacklog: Int64 = 1 << 30

        /// The defaults.
        public init() {}
    }

    /// A continuous backup to `storage` with `options`, for a pool to run.
    public struct Configuration: Sendable {
        /// Where the records go.
        public var storage: any BackupStorage
        /// How often, and how much is kept.
        public var options: Options

        /// A backup to `storage`.
        public init(storage: any BackupStorage, options: Options = Options()) {
            self.storage = storage
            self.options = options
        }
    }

    /// A commit the backup has shipped: its number in the backup (from 0,
    /// the state the backup began with) and when it was shipped.
    public struct ShippedCommit: Sendable, Equatable {
        /// The commit's number.
        public let commit: UInt64
        /// When its record was written.
        public let time: Date
        /// What to keep apart from the destination, for a restore to check
        /// that the destination was not rolled back to before this commit.
        public let receipt: BackupReceipt
    }

    /// The database's path.
    public let path: String
    private let storage: any BackupStorage
    private let options: Options
    private let queue = DispatchQueue(label: "DBCrypt.ContinuousBackup")
    /// Where the callbacks run: never on the pool's writer (a commit may
    /// have the backup ship), so a callback may use the pool.
    private let callbacks = DispatchQueue(label: "DBCrypt.ContinuousBackup.callbacks")
    /// Whether a round runs now or is queued, and whether the last one
    /// failed: the writer's commit then does not wait to restart the log;
    /// and whether such a commit waits for its turn on `queue`, which a
    /// timer's round then gives it (see ``restartLog(on:withNoRead:)``).
    private let roundState = Mutex((running: false, failed: false, queued: false, commitWaiting: false))
    private var timer: DispatchSourceTimer?
    private let shippedCommit = Mutex<ShippedCommit?>(nil)
    /// Where the last round that succeeded left the log, for ``lag()``.
    let shipping = Mutex(Position())
    private let stopped = Mutex(false)
    /// What ended the backup by itself (its database replaced, another writer at the destination), for ``stop()`` to throw.
    private let ending = Mutex<BackupError?>(nil)
    /// The backup is the destination's one writer while it runs.
    private let claim: BackupWriterClaim
    /// The file the backup began with.
    private let file: FileIdentity

    // Used on `queue` only.
    private var held: Database
    private var next: Database
    private let authenticator: BackupAuthenticator
    private var state: ShippingState
    private var lastSnapshot: Date?
    private var pageSize: Int

    /// Where the next record continues the backup.
    private struct ShippingState {
        var nextNumber: UInt64 = 1
        var previousMAC = [UInt8](repeating: 0, count: 32)
        /// The next commit's number.
        var nextCommit: UInt64 = 0
        var generation: WriteAheadLogHeader?
        var nextFrame = 0
        var seed: (UInt32, UInt32) = (0, 0)
        /// Whether the backup holds a complete snapshot it can continue from.
        var needsSnapshot = true
        /// The backup's identity: new, or the one of the backup continued.
        var backup: BackupIdentity?
    }

    /// Starts backing up the encrypted database at `path` to `storage`:
    /// opens two connections with `key`, continues the backup found there or
    /// takes a first snapshot, and ships every `options.interval` until
    /// ``stop()``.
    ///
    /// - parameter key: the database's key (a passphrase is derived once).
    /// - parameter cipher: its settings, when not a standard format.
    /// - throws: ``DatabaseError/misuse(reason:)`` for a plaintext database
    ///   or one not in WAL mode; ``DatabaseError/destinationIsSource(path:)``
    ///   for a receipt path that names the database or one of its journals;
    ///   ``BackupError/destinationInUse(location:)``
    ///   when another backup writes there; ``BackupError/wrongKey(location:)`` when the
    ///   destination holds another database's backup; the errors of
    ///   ``Database/init(path:key:options:)`` and of the first round.
    public convenience init(path: String, key: DatabaseKey, cipher: CipherSettings = .sqlcipher4, storage: any BackupStorage,
                            options: Options = Options()) throws {
        var opening = Database.Options()
        opening.cipher = cipher
        try self.init(path: path, openingKey: key, openingOptions: opening, storage: storage, options: options)
    }

    /// As the public initializer, with the options of the app's connections (a pool's readers).
    init(path: String, openingKey: DatabaseKey, openingOptions: Database.Options, storage: any BackupStorage, options: Options) throws {
        // A receipt is renamed over its path: never over the database or a journal of it.
        if let receipt = options.receiptPath, CompanionFile.isDatabaseOrCompanion(receipt, of: path) {
            throw DatabaseError.destinationIsSource(path: receipt)
        }
        var holding = SnapshotBackup.holdingRead(openingOptions)
        let first = try Database(path: path, key: openingKey, options: holding)
        guard let cipher = first.cipher, let key = first.keyForOtherConnections else {
            throw DatabaseError.misuse(reason: "a continuous backup ships encrypted pages, and \(path) is not encrypted: make a snapshot backup instead, or encrypt it first")
        }
        guard try first.fetchScalar(String.self, "PRAGMA main.journal_mode")?.lowercased() == "wal" else {
            throw DatabaseError.misuse(reason: "a continuous backup ships the WAL's frames, and \(path) is in rollback-journal mode: switch it to WAL mode (PRAGMA journal_mode = WAL) first")
        }
        holding.cipher = cipher
        holding.tryOtherFormat = false
        let second = try Database(path: path, key: key, options: holding)
        guard let salt = cipher.fileSalt(path, key: key) else {
            throw DatabaseError.damaged(path: path, reason: "its salt cannot be read")
        }
        guard let file = FileIdentity(path) else { throw DatabaseError.fileNotFound(path: path) }
        self.file = file
        claim = try storage.claimWriting()
        self.path = path
        self.storage = storage
        self.options = options
        held = first
        next = second
        pageSize = cipher.effectivePageSize
        authenticator = try BackupAuthenticator(databaseKey: key, salt: salt, settings: cipher)
        state = ShippingState()
        try queue.sync {
            try Self.beginRead(held)
            try resume()
            try round()
        }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let nanoseconds = max(1_000_000, Int(options.interval.components.seconds * 1_000_000_000 + options.interval.components.attoseconds / 1_000_000_000))
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            do {
                try self.round(yielding: true)
            } catch {
                if self.ending.withLock({ $0 }) != nil { self.timer?.cancel() }
                self.report(error)
                self.letGoIfTheBacklogIsTooLarge()
            }
        }
        timer.resume()
        self.timer = timer
    }

    deinit {
        timer?.cancel()
        claim.release()
    }

    /// The last commit shipped (when a backup was continued, the last one
    /// the backup held), or nil before the first snapshot.
    public var lastShipped: ShippedCommit? { shippedCommit.withLock { $0 } }

    /// Ships what is committed now and waits for it.
    ///
    /// - throws: ``BackupError`` (``BackupError/databaseReplaced(path:)``
    ///   once the backup ended by itself), or ``DatabaseError/connectionClosed`` after ``stop()``.
    @discardableResult
    public func shipNow() throws -> ShippedCommit? {
        try queue.sync {
            if let ending = ending.withLock({ $0 }) { throw ending }
            guard !stopped.withLock({ $0 }) else { throw DatabaseError.connectionClosed }
            try round()
            return lastShipped
        }
    }

    /// Ships what is committed, then stops and closes its connections, and
    /// returns once the callbacks of the last round have run. Stopping
    /// twice does nothing.
    ///
    /// - throws: ``BackupError`` when the last round fails: its frames are
    ///   then not in the backup (the database still has them);
    ///   ``BackupError/databaseReplaced(path:)`` when the backup had ended by
    ///   itself because its database's path named another file.
    public func stop() throws {
        defer { callbacks.sync {} }
        try stopShipping()
    }

    /// As ``stop()``, without waiting for the callbacks: for a pool that
    /// closes on its writer's queue, where a callback may be waiting to write.
    func stopShipping() throws {
        timer?.cancel()
        try queue.sync {
            if let ending = ending.withLock({ $0 }) { throw ending }
            guard !stopped.withLock({ $0 }) else { return }
            defer { end() }
            try round()
        }
    }

    /// Stops shipping for good: closes both connections and gives up the destination. On `queue`.
    private func end() {
        guard !stopped.withLock({ $0 }) else { return }
        stopped.withLock { $0 = true }
        held.closeWithoutCheckpoint()
        next.closeWithoutCheckpoint()
        claim.release()
    }

    // MARK: - Restarting the log

    /// Called by the pool's writer, in the commit that filled the WAL (no
    /// commit of this process can come meanwhile): ships every committed
    /// frame, then, through `withNoRead` (which runs its argument once the
    /// pool's own reads have ended, or returns nil when they did not end in
    /// time), lets go of both reads and checkpoints with RESTART on the
    /// writer's connection `db`, so that the next commit starts the log
    /// over instead of growing it.
    ///
    /// A commit of another process that slipped in after the frames were
    /// shipped shows in the log's size at the checkpoint: the next round
    /// then takes a snapshot, which holds it. A RESTART that did not finish
    /// (`SQLITE_BUSY`: a reader of another process, or its write) leaves
    /// the log, but for a moment no read kept another process from
    /// checkpointing it and starting it over: once the read is held again,
    /// the log must still be the one shipped, with no commit past the
    /// shipping, or the next round takes a snapshot. When shipping fails,
    /// nothing is checkpointed and the reads stay.
    func restartLog(on db: OpaquePointer, withNoRead: (() -> Int32) -> Int32?) {
        // A round under way (a snapshot being written, say) or failing (the
        // destination unreachable) would hold up the commit: a later commit
        // restarts the log instead.
        // No round runs or is queued now, and a timer's round that would
        // begin before this commit's turn on the queue lets it go first.
        let (proceeds, failed) = roundState.withLock { state -> (Bool, Bool) in
            guard !state.running, !state.queued else { return (false, state.failed) }
            state.commitWaiting = true
            return (true, state.failed)
        }
        guard proceeds else { return }
        defer { roundState.withLock { $0.commitWaiting = false } }
        queue.sync {
            // Stopped by hand, or let go of a backlog too large: the backup
            // holds no read to keep, and the log restarts as without it.
            guard !stopped.withLock({ $0 }), !shipping.withLock({ $0.lettingGo }) else {
                _ = withNoRead { sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_RESTART, nil, nil) }
                return
            }
            guard !failed, !state.needsSnapshot else { return }
            // The commit waits for what is shipped here: a small tail only.
            // More (the rounds fell behind) goes in a round of its own, now,
            // and a later commit restarts the log.
            guard logSize().unshipped <= Self.tailShippedInCommit else {
                roundState.withLock { $0.queued = true }
                queue.async { [weak self] in
                    guard let self else { return }
                    defer { self.roundState.withLock { $0.queued = false } }
                    guard !self.stopped.withLock({ $0 }) else { return }
                    do { try self.round() } catch { self.report(error) }
                }
                return
            }
            do {
                try shipFrames()
            } catch {
                report(error)
                return
            }
            let shipped = state.generation == nil ? 0 : state.nextFrame
            var log: Int32 = -1
            guard let code = withNoRead({
                Self.endRead(held)
                Self.endRead(next)
                return sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_RESTART, &log, nil)
            }) else { return }  // the reads are still held
            do {
                try Self.beginRead(held)
            } catch {
                state.needsSnapshot = true
                report(error)
                return
            }
            // Unless the checkpoint saw the log end where the shipping did,
            // another process committed in between: its frames may be
            // copied into the file and the log started over without them.
            if code == SQLITE_OK ? Int(log) > shipped : !logEndsWhereTheShippingDid() { state.needsSnapshot = true }
        }
    }

    /// The most of the log a commit ships before it restarts the log:
    /// 1 MiB, one request's worth.
    static let tailShippedInCommit: Int64 = 1 << 20

    /// The log's size in bytes (its frames, not the file's high-water
    /// mark), and how much of it is not shipped (all of it when it is
    /// another generation than the one shipped from); zeros when it cannot
    /// be read. On `queue`.
    private func logSize() -> (bytes: Int64, unshipped: Int64) {
        let wal = CompanionFile.wal.path(of: path)
        guard let generation = try? CommittedFrames.generation(of: wal),
              let frames = try? CommittedFrames.length(of: wal, generation: generation) else { return (0, 0) }
        let frameSize = Int64(WriteAheadLogFrame.headerSize + generation.pageSize)
        let shipped = generation == state.generation ? min(state.nextFrame, frames) : 0
        return (Int64(frames) * frameSize, Int64(frames - shipped) * frameSize)
    }

    /// Whether the log is still the one shipped, with no commit after the
    /// last frame shipped (read while a read is held, so it cannot start over meanwhile).
    private func logEndsWhereTheShippingDid() -> Bool {
        let wal = CompanionFile.wal.path(of: path)
        guard let current = try? CommittedFrames.generation(of: wal) else { return false }
        guard let generation = state.generation, current == generation else { return false }
        guard let more = try? CommittedFrames.read(wal, generation: generation, from: state.nextFrame, seed: state.seed, limit: 1) else {
            return false
        }
        return more.commits.isEmpty
    }

    // MARK: - Rounds

    /// Ships the frames committed since the last round, then a snapshot when
    /// one is due, then prunes. On failure the read that protects the
    /// unshipped frames stays.
    /// - parameter yielding: a round of the timer's, which lets a commit
    ///   that waits to restart the log go first (it runs next on `queue`),
    ///   rather than hold it up for a whole round.
    private func round(yielding: Bool = false) throws {
        guard !stopped.withLock({ $0 }) else { return }
        // A database renamed over, or removed and made again: its commits are not this file's.
        guard FileIdentity(path) == file else {
            // Nothing more of the file begun with can be shipped, and the new one is not this backup's.
            let error = BackupError.databaseReplaced(path: path)
            ending.withLock { $0 = error }
            end()
            throw error
        }
        let proceeds = roundState.withLock { state -> Bool in
            if yielding && state.commitWaiting { return false }
            state.running = true
            return true
        }
        guard proceeds else { return }
        let started = Date()
        var succeeded = false
        defer { roundState.withLock { ($0.running, $0.failed) = (false, !succeeded) } }
        try Self.beginRead(next)
        do {
            try shipFrames()
            if state.needsSnapshot || lastSnapshot.map({ Date().timeIntervalSince($0) >= options.snapshotInterval.timeInterval }) ?? true {
                try snapshot()
                try prune()
            }
        } catch {
            Self.endRead(next)
            throw error
        }
        Self.endRead(held)
        swap(&held, &next)
        succeeded = true
        recordPosition(caughtUp: started)
    }

    /// Keeps where the shipping is in the log for ``lag()``; `caughtUp`
    /// when a round shipped all that was committed when it began.
    private func recordPosition(caughtUp: Date? = nil) {
        shipping.withLock { position in
            position.generation = state.generation
            position.frame = state.nextFrame
            position.seed = state.seed
            if let caughtUp {
                position.caughtUp = caughtUp
                position.lettingGo = false
            }
        }
    }

    /// Past ``Options/maximumBacklog`` bytes of log, while rounds fail:
    /// lets go of both reads (checkpoints copy the log again, and may start
    /// it over), says so once, and has the next round that reaches the
    /// destination take a snapshot. On `queue`.
    private func letGoIfTheBacklogIsTooLarge() {
        guard !state.needsSnapshot, !stopped.withLock({ $0 }) else { return }
        let log = logSize().bytes
        guard log > options.maximumBacklog else { return }
        Self.endRead(held)
        Self.endRead(next)
        state.needsSnapshot = true
        shipping.withLock { $0.lettingGo = true }
        report(BackupError.backlogTooLarge(location: storage.location, bytes: log))
    }

    /// Ships the frames committed since the last record, up to the log's
    /// end as it is now: frames a writer appends meanwhile wait for the next
    /// round, so a round ends even when the writer outpaces the destination
    /// (and snapshots, pruning and the log's restart still come).
    private func shipFrames() throws {
        let wal = CompanionFile.wal.path(of: path)
        guard let generation = try DatabaseError.translating({ () throws(FileError) in try CommittedFrames.generation(of: wal) }) else { return }
        if generation != state.generation {
            // With a read always held, the log starts over only once every
            // frame of the one before was checkpointed, and so shipped; and
            // then as SQLite starts it over: the next checkpoint sequence
            // number and the first salt plus one. Anything else is a log
            // whose frames were not all seen: a snapshot comes first.
            if let previous = state.generation, !state.needsSnapshot, !generation.follows(previous) { state.needsSnapshot = true }
            state.generation = generation
            state.nextFrame = 0
            state.seed = generation.checksum
        }
        pageSize = generation.pageSize
        guard !state.needsSnapshot else { return }
        // Where the log ends now: every frame committed before this round's read began lies before it.
        let logEnd = try DatabaseError.translating { () throws(FileError) in try CommittedFrames.length(of: wal, generation: generation) }
        // A backlog (the destination was down) goes in records of about 16 MiB.
        let limit = max(1, (16 << 20) / (WriteAheadLogFrame.headerSize + pageSize))
        while true {
            let frames = try DatabaseError.translating { () throws(FileError) in
                try CommittedFrames.read(wal, generation: generation, from: state.nextFrame, seed: state.seed, limit: limit)
            }
            guard !frames.commits.isEmpty else { return }
            try ship(frames)
            // What was committed while that record was written waits for the
            // next round: chasing the writer would ship a record per commit
            // or two (a bill counts requests), and never end under writes
            // faster than the destination.
            guard state.nextFrame < logEnd else { return }
        }
    }

    /// Writes `frames` as the next record.
    private func ship(_ frames: CommittedFrames) throws {
        let generation = frames.generation
        var record = BackupRecord(number: state.nextNumber, kind: .frames, pageSize: UInt32(pageSize), time: Self.now(),
                                  commit: state.nextCommit, databasePages: frames.commits.last!.databasePages, previousMAC: state.previousMAC,
                                  backup: try identity())
        record.bigEndianChecksums = generation.bigEndianChecksums
        record.commitCount = UInt32(frames.commits.count)
        record.checkpointSequence = generation.checkpointSequence
        record.salts = generation.salts
        record.firstFrame = UInt32(frames.firstFrame)
        record.frameCount = UInt32(frames.frameCount)
        record.seed = frames.seed
        try put(&record, payload: frames.bytes)
        state.nextFrame += frames.frameCount
        state.seed = frames.end
        state.nextCommit += UInt64(frames.commits.count)
        recordPosition()
        shippedCommit.withLock { $0 = ShippedCommit(record, commit: record.lastCommit) }
        report(lastShipped!)
    }

    /// Writes the database as of the last commit shipped: the file's pages
    /// with the log's frames up to there applied (read while the read held
    /// keeps any checkpoint from copying past them), in parts.
    private func snapshot() throws {
        // A first snapshot takes in every committed frame; a later one those shipped.
        let generation = state.nextFrame > 0 || state.needsSnapshot ? state.generation : nil
        guard let image = try DatabaseImage(path: path, pageSize: max(pageSize, 512), generation: generation,
                                            frameLimit: state.needsSnapshot ? nil : state.nextFrame) else {
            return   // the log started over meanwhile: the next round takes it
        }
        let position = state.needsSnapshot && generation != nil ? (frame: image.frameCount, seed: image.end) : (frame: state.nextFrame, seed: state.seed)
        let pageSize = image.pageSize, pages = image.pages
        let startsOver = state.needsSnapshot
        let commit = startsOver ? state.nextCommit : state.nextCommit - 1
        let partPages = max(1, (16 << 20) / pageSize)
        var partIndex: UInt32 = 0
        var firstPage: UInt32 = 1
        let time = Self.now()
        var lastPart: BackupRecord?
        repeat {
            let last = min(pages, firstPage + UInt32(partPages) - 1)
            var payload = Data(count: Int(last >= firstPage ? last - firstPage + 1 : 0) * pageSize)
            try payload.withUnsafeMutableBytes { try image.read(firstPage, through: last, into: $0) }
            var record = BackupRecord(number: state.nextNumber, kind: .snapshot, pageSize: UInt32(pageSize), time: time, commit: commit,
                                      databasePages: pages, previousMAC: state.previousMAC, backup: try identity())
            record.partIndex = partIndex
            record.isLastPart = last >= pages
            record.startsOver = startsOver
            if let generation = state.generation {
                record.bigEndianChecksums = generation.bigEndianChecksums
                record.checkpointSequence = generation.checkpointSequence
                record.salts = generation.salts
            }
            record.firstFrame = UInt32(position.frame)
            record.seed = position.seed
            try put(&record, payload: payload)
            lastPart = record
            partIndex += 1
            firstPage = last + 1
        } while firstPage <= pages
        (state.nextFrame, state.seed) = position
        if startsOver { state.nextCommit += 1 }
        state.needsSnapshot = false
        recordPosition()
        lastSnapshot = Date()
        shippedCommit.withLock { $0 = ShippedCommit(lastPart!, commit: commit) }
        report(lastShipped!)
    }

    /// Deletes the records a restore within the retention no longer needs:
    /// those before the newest complete snapshot older than the retention.
    private func prune() throws {
        let retention = min(max(0, options.retention.timeInterval * 1000), Double(UInt64.max / 2))
        let now = Self.now()
        let cutoff = now > UInt64(retention) ? now - UInt64(retention) : 0
        let catalog = try BackupCatalog(storage)
        guard let keep = catalog.snapshots.last(where: { $0.time <= cutoff && $0.isComplete }) else { return }
        try storage.delete(catalog.entries.filter { $0.number < keep.firstNumber }.map(\.name) + catalog.superseded.map(\.name))
    }

    // MARK: - Resuming

    /// Continues the backup found at the destination: after its last
    /// record, and from where it left the log when that is still this
    /// database's log; otherwise a new snapshot comes first.
    ///
    /// - throws: ``BackupError/wrongKey(location:)`` when none of the last
    ///   16 records authenticates: another database's backup is there;
    ///   ``BackupError/damaged(location:reason:)`` when its newest records
    ///   are another backup's than its oldest (copied in); the
    ///   storage's error when none of them can be read at all.
    private func resume() throws {
        let catalog = try BackupCatalog(storage)
        guard let lastEntry = catalog.entries.last else { return }
        guard lastEntry.number < 9_999_999_999_999_000 else {
            throw BackupError.damaged(location: storage.location, reason: "its last record is numbered \(lastEntry.number): start a new destination")
        }
        state.nextNumber = lastEntry.number + 1
        // The newest record that authenticates: the ones after it (damaged,
        // or not this database's) break the chain, and a snapshot follows.
        let found = try storage.firstOpened(catalog.entries.reversed().prefix(16).map(\.name)) { object, name in
            try? BackupRecord.open(object, named: name, with: authenticator)
        }
        guard let (last, payload) = found else { throw BackupError.wrongKey(location: storage.location) }
        // The destination is the backup of its oldest record; one it did not write is never continued.
        let oldest = try storage.firstOpened(catalog.entries.prefix(16).map(\.name)) { object, name in
            try? BackupRecord.open(object, named: name, with: authenticator)
        }
        if let (owner, _) = oldest, owner.backup != last.backup {
            throw BackupError.damaged(location: storage.location, reason: "its newest records belong to another backup than its oldest (copied in from elsewhere): start a new destination")
        }
        state.backup = last.backup
        state.nextCommit = last.lastCommit + 1
        shippedCommit.withLock { $0 = ShippedCommit(last, commit: last.lastCommit) }
        lastSnapshot = catalog.snapshots.last(where: \.isComplete).map { Date(timeIntervalSince1970: Double($0.time) / 1000) }
        guard last.number == lastEntry.number else { return }
        state.previousMAC = last.mac
        let wal = CompanionFile.wal.path(of: path)
        guard last.kind == .frames || last.isLastPart, let generation = try DatabaseError.translating({ () throws(FileError) in try CommittedFrames.generation(of: wal) }),
              generation.checkpointSequence == last.checkpointSequence, generation.salts == last.salts else { return }
        let (endFrame, endSeed): (Int, (UInt32, UInt32))
        if last.kind == .frames {
            endFrame = Int(last.firstFrame + last.frameCount)
            endSeed = payload.withUnsafeBytes {
                WriteAheadLogFrame.chain($0, frameSize: WriteAheadLogFrame.headerSize + generation.pageSize, count: Int(last.frameCount),
                                         seed: last.seed, bigEndian: generation.bigEndianChecksums)
            }
        } else {
            endFrame = Int(last.firstFrame)
            endSeed = last.seed
        }
        // The log still holds those frames, unchanged, when its chain reaches the same checksum there.
        let frames = try DatabaseError.translating { () throws(FileError) in try CommittedFrames.read(wal, generation: generation) }
        guard frames.frameCount >= endFrame, frames.chain(through: endFrame) == endSeed else { return }
        state.generation = generation
        state.nextFrame = endFrame
        state.seed = endSeed
        state.needsSnapshot = false
    }

    // MARK: - Helpers

    private func put(_ record: inout BackupRecord, payload: Data) throws {
        let object = try record.seal(payload: payload, with: authenticator)
        do {
            try storage.put(record.name, object)
        } catch BackupError.destinationInUse(let location) {
            // The storage's claim was taken over (an S3 lease that lapsed): another writer ships now.
            let error = BackupError.destinationInUse(location: location)
            ending.withLock { $0 = error }
            end()
            throw error
        }
        state.nextNumber += 1
        state.previousMAC = record.mac
    }

    /// Begins a read transaction that holds a snapshot, or leaves none when it fails.
    private static func beginRead(_ db: Database) throws {
        try db.connection.run("BEGIN DEFERRED")
        do {
            _ = try db.fetchScalar(Int.self, "SELECT count(*) FROM main.sqlite_master")
        } catch {
            try? db.connection.run("ROLLBACK")
            throw error
        }
    }

    private static func endRead(_ db: Database) {
        if db.isInsideTransaction { try? db.connection.run("COMMIT") }
    }

    /// The identity of the records written: the backup continued's, or a new one.
    private func identity() throws -> BackupIdentity {
        if let backup = state.backup { return backup }
        let backup = try BackupIdentity.random()
        state.backup = backup
        return backup
    }

    private static func now() -> UInt64 { UInt64(Date().timeIntervalSince1970 * 1000) }

    /// Calls `options.shipped` on the callbacks' queue, then writes the
    /// commit's receipt to `options.receiptPath` (a failure goes to `options.failed`).
    private func report(_ commit: ShippedCommit) {
        let (shipped, receiptPath, failed) = (options.shipped, options.receiptPath, options.failed)
        guard shipped != nil || receiptPath != nil else { return }
        callbacks.async {
            shipped?(commit)
            guard let receiptPath else { return }
            do throws(FileError) {
                try commit.receipt.write(to: receiptPath)
            } catch {
                failed?(BackupError.receiptNotWritten(commit: commit.commit, path: receiptPath, reason: error.reason))
            }
        }
    }

    /// Calls `options.failed` on the callbacks' queue.
    private func report(_ error: Error) {
        guard let failed = options.failed else { return }
        callbacks.async { failed(error) }
    }
}

extension ContinuousBackup.ShippedCommit {
    /// `commit`, held by `record`.
    init(_ record: BackupRecord, commit: UInt64) {
        self.init(commit: commit, time: Date(timeIntervalSince1970: Double(record.time) / 1000), receipt: BackupReceipt(commit: commit, of: record))
    }
}
