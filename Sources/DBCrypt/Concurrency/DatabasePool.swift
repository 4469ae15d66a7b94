import CSQLCipher
import Dispatch
import Foundation
import Synchronization

/// Concurrent access to one database in WAL mode: one writer connection
/// behind a serial queue, and up to ``Configuration/maximumReaderCount``
/// read-only connections that read at the same time as each other and as
/// the writer, each read in a snapshot of its own.
///
/// ```swift
/// let pool = try DatabasePool(path: "notes.db", key: .passphrase(secret))
/// try pool.write { db in try db.execute("INSERT INTO note(title) VALUES (?)", ["Hello"]) }
/// let count = try await pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM note") }
/// ```
///
/// **The key is derived once.** A passphrase costs a PBKDF2 derivation
/// (256,000 rounds of SHA-512 for SQLCipher 4) each time a connection is
/// keyed with it. The pool derives it once, with the file's salt, and keys
/// the writer and every reader with the resulting raw key and salt, so
/// readers are cheap to open, to reopen after ``releaseMemory()``, and to add.
/// (Where DBCrypt's crypto provider is not installed, as with a SQLCipher 4
/// library, each connection derives the key itself.)
///
/// - `write` runs in an IMMEDIATE transaction on the writer; a write does
///   not wait for readers, and readers do not wait for it, but for one
///   moment every 4,000 frames written: the commit that fills the WAL that
///   far waits for the reads under way to end (the busy timeout at most),
///   and new reads wait with it, so that it can start the WAL over.
/// - `read` runs in one read transaction on a reader: every query in it sees
///   the database as it was when the read began, whatever is committed
///   meanwhile. A reader cannot write.
/// - The WAL is copied into the database file once it holds 1,000 pages,
///   by a connection of the pool's own on a thread of its own: the commit
///   that filled it does not wait for the copy.
/// - ``barrierWriteWithoutTransaction(_:)`` waits until no read runs, and
///   keeps new reads waiting, for work that must see no reader (a checkpoint
///   that truncates the WAL, `VACUUM`).
/// - With ``Database/Options/exclusiveToThisProcess``, no other process can
///   read the file while the pool is open, and each read and commit is
///   cheaper: no file lock of its own. Readers are then read-write
///   connections with `PRAGMA query_only` (only those share the lock): a
///   read that turns `query_only` off could write. ``changeKey(to:newCipher:)``
///   closes every connection while the file is re-encrypted: another
///   process that opens the file meanwhile makes the pool's reopening fail
///   with ``DatabaseError/databaseInUse(path:)``.
///
/// Calling the pool from inside one of its own closures would wait on
/// itself (a read waits for a free reader, a write for the writer), so it
/// throws ``DatabaseError/reentrantQueueAccess``: use the `Database` the
/// closure was given.
public final class DatabasePool: @unchecked Sendable {
    // @unchecked: `writer` is touched only on `writerQueue`; the readers
    // are handed out under `lock`, one reader to one read at a time.

    /// How a pool opens its connections: now ``Database/Options``'s
    /// `maximumReaderCount` and `continuousBackup`.
    @available(*, deprecated, message: "set maximumReaderCount and continuousBackup in Database.Options")
    public struct Configuration: Sendable {
        /// How many readers may read at once (at least 1). Readers are opened
        /// when first needed and kept for the next read.
        public var maximumReaderCount: Int = max(2, ProcessInfo.processInfo.activeProcessorCount)

        /// Ship every commit to a backup destination while the pool is open
        /// (see ``ContinuousBackup``); nil (the default) for none.
        public var continuousBackup: ContinuousBackup.Configuration?

        /// The pool's default configuration.
        public init() {}
    }

    /// The path of the database.
    public let path: String

    private var writer: Database
    /// The writer's hooks (which tables each commit changed), installed on
    /// the writer queue by the first observation: until then writes pay
    /// nothing for observation.
    private var tracker: ChangeTracker?
    /// Whether `tracker` is set, for threads other than the writer's (under `lock`).
    private var hooksInstalled = false
    let observations = ObservationCenter()
    /// Notices other connections' commits for observations that ask;
    /// set once, at the end of `init`.
    private(set) var otherConnections: OtherConnectionsPoller!
    /// What opens the writer again after a key change.
    private let writerOptions: Database.Options
    private let writerQueue = DispatchQueue(label: "DBCrypt.DatabasePool.writer")
    private let readerQueue = DispatchQueue(label: "DBCrypt.DatabasePool.readers", attributes: .concurrent)
    /// What opens a reader: the raw key and salt when the key could be
    /// derived once. Changed under `lock` by a key change.
    private var readerKey: DatabaseKey?
    private var readerOptions: Database.Options
    /// The kind of key readers open with: `.rawWithSalt` when it was derived
    /// once (what tests check on engines whose derivations they cannot count).
    var readerKeyKind: DatabaseKey.Kind? { lock.withLock { _ in readerKey?.kind } }
    /// One permit per reader that may read at once; a barrier, and the
    /// commit that restarts the WAL, take them all.
    private let readPermits: ReadPermits
    /// Guards `readerKey`, `readerOptions`, `idleReaders`, `isClosed` and
    /// `hooksInstalled`, which the pool's class holds (a `Database` is not
    /// `Sendable`, so they are not moved into the lock's value).
    private let lock = Mutex(())
    private var idleReaders: [UncheckedDatabase] = []
    private var isClosed = false
    /// Copies the WAL into the file off the writer's thread; set once, at
    /// the end of `init` (internal for tests, which hold it).
    private(set) var checkpointer: BackgroundCheckpointer!
    /// The continuous backup the configuration asked for, running until ``close()``.
    public let continuousBackup: ContinuousBackup?

    /// Opens (or creates) the database at `path` in WAL mode. The writer
    /// opens, keys and checks its connection now; readers open on first use.
    ///
    /// - throws: everything ``Database/init(path:key:options:)`` throws, at
    ///   once; ``DatabaseError/misuse(reason:)`` for
    ///   `options.readOnly` (a pool writes; open read-only databases with a
    ///   ``DatabaseQueue``) or a reader count below 1
    ///   (``Database/Options/maximumReaderCount``).
    public init(path: String, key: DatabaseKey? = nil, options: Database.Options = Database.Options()) throws {
        guard !options.readOnly else {
            throw DatabaseError.misuse(reason: "a pool writes: open a read-only database with a DatabaseQueue")
        }
        guard options.maximumReaderCount >= 1 else {
            throw DatabaseError.misuse(reason: "a pool needs at least one reader (maximumReaderCount)")
        }
        var writerOptions = options
        writerOptions.journalMode = .wal
        // The writer derives a passphrase once; the readers open with what it opened with.
        let writer = try Database(path: path, key: key, options: writerOptions)
        self.writer = writer
        self.writerOptions = writerOptions
        self.path = path
        readerKey = writer.keyForOtherConnections
        var readerOptions = options
        // A read-only connection cannot share the process's exclusive lock:
        // then readers are read-write connections that refuse writes.
        readerOptions.readOnly = !options.exclusiveToThisProcess
        readerOptions.queryOnly = options.exclusiveToThisProcess
        readerOptions.create = false
        readerOptions.journalMode = .default
        readerOptions.cipher = writer.cipher ?? options.cipher
        readerOptions.tryOtherFormat = false
        self.readerOptions = readerOptions
        if let backup = options.continuousBackup {
            guard let readerKey else {
                throw DatabaseError.misuse(reason: "a continuous backup ships encrypted pages: open the pool with a key")
            }
            continuousBackup = try ContinuousBackup(path: path, openingKey: readerKey, openingOptions: readerOptions,
                                                    storage: backup.storage, options: backup.options)
        } else {
            continuousBackup = nil
        }
        readPermits = ReadPermits(count: options.maximumReaderCount)
        otherConnections = OtherConnectionsPoller(
            queue: writerQueue, readVersion: { [weak self] in self?.writer.dataVersionReading() },
            changed: { [observations] in observations.otherConnectionCommitted() })
        checkpointer = BackgroundCheckpointer(readPermits: readPermits) { [weak self] in
            guard let self else { throw DatabaseError.connectionClosed }
            return try self.openCheckpointingConnection()
        }
        checkpointer.writerBusyTimeout = min(writerOptions.busyTimeout, .seconds(86_400)).busyTimeoutMilliseconds
        try Self.keepTheWALBounded(writer, checkpointer: checkpointer)
        // The backup always holds a read: a commit must not wait for it to
        // restart the WAL; the backup ships what is left and lets go instead.
        if let continuousBackup {
            checkpointer.beginLongRead()
            checkpointer.restartLogThroughBackup = { [weak continuousBackup] db, withNoRead in
                continuousBackup?.restartLog(on: db, withNoRead: withNoRead)
            }
        }
    }

    /// The connection the background checkpoints run on: a reader's key and
    /// settings, but not read-only (SQLite refuses a checkpoint to one).
    private func openCheckpointingConnection() throws -> Database {
        let (closed, key, readerOptions) = lock.withLock { _ in (isClosed, readerKey, self.readerOptions) }
        guard !closed else { throw DatabaseError.connectionClosed }
        var options = readerOptions
        options.readOnly = false
        options.queryOnly = false
        options.trace = nil
        return try Database(path: path, key: key, options: options)
    }

    /// Checkpoints when SQLite would by itself (PASSIVE once the WAL holds
    /// 1,000 frames), but on `checkpointer`'s thread, so the commit does not
    /// wait for it; and RESTART, in the commit, once the WAL holds 4,000.
    ///
    /// The WAL starts over only when a checkpoint has copied all of it and no
    /// reader reads it. Under writes without pause, or reads without pause,
    /// that moment never comes, and the WAL would grow with every write.
    /// RESTART waits for the writer's own frames to be copied and for the
    /// readers of older frames to end: the pool's own reads end first (up
    /// to the busy timeout; new ones wait meanwhile), other processes'
    /// readers get 100 ms, and a RESTART that waited in vain is tried again only after
    /// 16, 64, 256, 1,024, then 4,000 more frames
    /// (``BackgroundCheckpointer/restartInCommit(_:walFrames:)``). While a
    /// backup reads, no RESTART is tried; a continuous backup ships and lets
    /// go first. The background
    /// checkpoints have copied most frames by then, but RESTART syncs the
    /// disk twice in the commit: 4,000 frames (16 MiB of 4 KiB pages) makes
    /// that rare. Attached databases checkpoint in the commit, as SQLite does.
    private static func keepTheWALBounded(_ writer: Database, checkpointer: BackgroundCheckpointer) throws {
        // The connection keeps `checkpointer` as long as it lives.
        writer.connection.walHookContext = checkpointer
        sqlite3_wal_hook(try writer.connection.open(), { context, db, schema, frames in
            let isMain = schema.map { strcmp($0, "main") == 0 } ?? false
            if isMain {
                let checkpointer = Unmanaged<BackgroundCheckpointer>.fromOpaque(context!).takeUnretainedValue()
                if frames >= 4 * BackgroundCheckpointer.interval, let db, checkpointer.restartInCommit(db, walFrames: frames) {
                    // Tried: the WAL starts over at the next commit, or is tried again later.
                } else if checkpointer.committed(walFrames: frames) == .checkpointHere {
                    sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
                }
            } else if frames >= 2000 {
                sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_RESTART, nil, nil)
            } else if frames >= 1000 {
                sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            }
            return SQLITE_OK
        }, Unmanaged.passUnretained(checkpointer).toOpaque())
    }

    // MARK: - Reading

    /// Runs `body` in one read transaction on a reader and waits for it:
    /// every query sees the same snapshot, and writing is refused. Reads run
    /// at the same time as each other (up to the reader count) and as writes.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess`` from inside one of the
    ///   pool's closures, ``DatabaseError/connectionClosed`` after ``close()``,
    ///   what opening a reader throws, what `body` throws, or an
    ///   `SQLITE_READONLY` ``DatabaseError`` when it writes.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        guard !HeldQueues.contains(self) else { throw DatabaseError.reentrantQueueAccess }
        return try withReader { reader in try reader.inReadSnapshot(body) }
    }

    /// Runs `body` on a reader with no transaction of its own: each statement
    /// sees the latest commit when it starts (see
    /// ``DatabaseReader/unsafeRead(_:)``). Readers refuse writes (see the
    /// pool's notes on ``Database/Options/exclusiveToThisProcess``).
    ///
    /// - throws: see ``read(_:)-(((Database)->T))``.
    public func unsafeRead<T>(_ body: (Database) throws -> T) throws -> T {
        guard !HeldQueues.contains(self) else { throw DatabaseError.reentrantQueueAccess }
        return try withReader(body)
    }

    /// Runs `body` in one read transaction on a reader without blocking the
    /// caller's thread.
    ///
    /// - throws: see ``read(_:)-(((Database)->T))``.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await unsafeRead { reader in try reader.inReadSnapshot(body) }
    }

    /// Runs `body` on a reader with no transaction of its own, without
    /// blocking the caller's thread: each statement sees the latest commit
    /// when it starts (see ``DatabaseReader/unsafeRead(_:)``). For a read
    /// that is one statement, it saves the read transaction's cost.
    ///
    /// - throws: see ``read(_:)-(((Database)->T))``.
    public func unsafeRead<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        guard !HeldQueues.contains(self) else { throw DatabaseError.reentrantQueueAccess }
        return try await withCheckedThrowingContinuation { continuation in
            readerQueue.async { continuation.resume(with: Result { try self.withReader(body) }) }
        }
    }

    /// Takes a permit and a reader (an idle one, or a new one), runs `body`
    /// with it on this thread, and gives both back.
    private func withReader<T>(_ body: (Database) throws -> T) throws -> T {
        readPermits.take()
        defer { readPermits.give() }
        let reader = try takeReader()
        defer { giveBack(reader) }
        return try HeldQueues.holding(self, as: .read) { try body(reader) }
    }

    private func takeReader() throws -> Database {
        let (closed, idle, key, options) = lock.withLock { _ in (isClosed, isClosed ? nil : idleReaders.popLast(), readerKey, readerOptions) }
        guard !closed else { throw DatabaseError.connectionClosed }
        return try idle.map(\.database) ?? Database(path: path, key: key, options: options)
    }

    private func giveBack(_ reader: Database) {
        let closed = lock.withLock { _ in
            if !isClosed { idleReaders.append(UncheckedDatabase(reader)) }
            return isClosed
        }
        if closed { reader.close() }
    }

    /// From inside a write closure, outside a transaction: starts a read
    /// that sees the database exactly as the writer left it (what it just
    /// committed, and nothing committed after), and runs `body` with it on a
    /// reader while the writer goes on (GRDB's `asyncConcurrentRead`). The
    /// snapshot is taken before this returns; `body` runs later, on another
    /// thread, and is given the error instead when the read could not begin
    /// (a ``DatabaseError/misuse(reason:)`` from a read, inside a
    /// transaction, or from a barrier write, which keeps every read out).
    ///
    /// ```swift
    /// try pool.writeWithoutTransaction { db in
    ///     try db.inTransaction { db in try db.execute("INSERT ...") }
    ///     pool.concurrentRead { result in /* reads exactly that state */ }
    ///     try db.execute("DELETE ...")   // not seen by the read above
    /// }
    /// ```
    public func concurrentRead(_ body: @escaping @Sendable (Result<Database, Error>) -> Void) {
        let reader: Database
        do {
            // From a read it would wait for a permit while holding one:
            // with one reader, forever.
            guard HeldQueues.role(of: self) == .write else {
                throw DatabaseError.misuse(reason: "concurrentRead must be called from inside one of the pool's write closures (it was called "
                    + (HeldQueues.contains(self) ? "from a read)" : "from outside the pool)"))
            }
            guard !writer.isInsideTransaction else {
                throw DatabaseError.misuse(reason: "concurrentRead must be called outside a transaction, so that it reads what was committed")
            }
            // The barrier holds every permit until it returns: this would wait for one forever.
            guard !checkpointer.keepsReadsOut else {
                throw DatabaseError.misuse(reason: "concurrentRead cannot be called from a barrier write, which keeps every read out until it returns")
            }
            readPermits.take()
            do {
                reader = try takeReader()
            } catch {
                readPermits.give()
                throw error
            }
            do {
                try reader.beginReadSnapshot()
            } catch {
                giveBack(reader)
                readPermits.give()
                throw error
            }
        } catch {
            readerQueue.async { body(.failure(error)) }
            return
        }
        let box = UncheckedDatabase(reader)
        readerQueue.async {
            defer {
                box.database.endReadSnapshot()
                self.giveBack(box.database)
                self.readPermits.give()
            }
            HeldQueues.holding(self, as: .read) { body(.success(box.database)) }
        }
    }

    // MARK: - Writing

    /// Runs `body` in an IMMEDIATE transaction on the writer and waits for
    /// it: committed when it returns, rolled back when it throws. Reads go on
    /// meanwhile, each in the snapshot it began with.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess``, ``DatabaseError/connectionClosed``,
    ///   what `body` throws, or the ``DatabaseError`` of BEGIN or COMMIT.
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try writeWithoutTransaction { db in try db.inTransaction(.immediate, body) }
    }

    /// Runs `body` on the writer with no transaction and waits for it, for
    /// statements that cannot run inside one.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess``, ``DatabaseError/connectionClosed``,
    ///   or what `body` throws.
    public func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try HeldQueues.checkWriterIsFree(self)
        return try writerQueue.sync { try onWriter(body) }
    }

    /// Runs `body` on the writer with no transaction once no read runs, and
    /// keeps new reads waiting until it returns: for a checkpoint that
    /// truncates the WAL, `VACUUM`, or anything that must see no reader.
    ///
    /// - throws: see ``writeWithoutTransaction(_:)-(((Database)->T))``.
    public func barrierWriteWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try HeldQueues.checkWriterIsFree(self)
        return try writerQueue.sync { try withNoReadOrCheckpoint { try onWriter(body) } }
    }

    /// On the writer queue: runs `body` once no background checkpoint and no
    /// read runs, and keeps new ones waiting until it returns. With
    /// `closingCheckpointer`, the checkpoints' connection is closed first (it
    /// reopens at the next checkpoint, keyed as the readers are then).
    private func withNoReadOrCheckpoint<T>(closingCheckpointer: Bool = false, _ body: () throws -> T) rethrows -> T {
        try checkpointer.withNoReadOrCheckpoint(closing: closingCheckpointer, body)
    }

    /// Runs `body` in an IMMEDIATE transaction on the writer without
    /// blocking the caller's thread.
    ///
    /// - throws: see ``write(_:)-(((Database)->T))``.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writeWithoutTransaction { db in try db.inTransaction(.immediate, body) }
    }

    /// Runs `body` on the writer with no transaction, without blocking the
    /// caller's thread.
    ///
    /// - throws: see ``writeWithoutTransaction(_:)-(((Database)->T))``.
    public func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try HeldQueues.checkWriterIsFree(self)
        return try await withCheckedThrowingContinuation { continuation in
            writerQueue.async { continuation.resume(with: Result { try self.onWriter(body) }) }
        }
    }

    /// Runs `serve` on the writer queue, after the writes queued before it,
    /// for a ``WriterSession``.
    func holdWriter(
        _ serve: @escaping @Sendable (Database, _ reportCommits: () -> Void) -> Void,
        failed: @escaping @Sendable (Error) -> Void
    ) {
        writerQueue.async { [self] in
            do {
                try onWriter { writer in
                    serve(writer) { if let tracker { observations.committed(tracker.takeCommitted()) } }
                }
            } catch {
                failed(error)
            }
        }
    }

    /// Runs `body` with the writer on the current thread, which runs the writer queue.
    private func onWriter<T>(_ body: (Database) throws -> T) throws -> T {
        defer { if let tracker { observations.committed(tracker.takeCommitted()) } }
        return try HeldQueues.holding(self) {
            guard !writer.isClosed else { throw DatabaseError.connectionClosed }
            return try body(writer)
        }
    }

    // MARK: - Observation

    /// ``DatabaseReader/observe(checkingOtherProcessesEvery:removingDuplicatesBy:_:)``, fetching on a reader while writes go on.
    public func observe<T: Sendable>(checkingOtherProcessesEvery interval: Duration?, removingDuplicatesBy isDuplicate: (@Sendable (T, T) -> Bool)?,
                                     _ fetch: @escaping @Sendable (Database) throws -> T) -> AsyncThrowingStream<T, Error> {
        observing(fetch, every: interval, isDuplicate: isDuplicate)
    }

    /// Installs the hooks on the writer, on its queue, then calls `then`;
    /// once they are installed, calls `then` at once, so that an
    /// observation starts (and fetches on a reader) while a write runs.
    /// Cached statements are dropped first: SQLite consults the authorizer
    /// when it prepares.
    func prepareObservation(then: @escaping @Sendable (Error?) -> Void) {
        let installed = lock.withLock { _ in hooksInstalled }
        guard !installed else { return then(nil) }
        writerQueue.async { [self] in
            do {
                if tracker == nil {
                    guard !writer.isClosed else { throw DatabaseError.connectionClosed }
                    writer.clearStatementCache()
                    tracker = try ChangeTracker.install(on: writer.connection)
                    lock.withLock { _ in hooksInstalled = true }
                }
                then(nil)
            } catch {
                then(error)
            }
        }
    }

    /// Runs `fetch` on a reader in one read transaction, recording the tables it reads.
    func fetchRecordingTables<T>(_ fetch: (Database) throws -> T) throws -> (T, Set<String>) {
        try withReader { (reader: Database) -> (T, Set<String>) in
            try reader.inReadSnapshot { (db: Database) -> (T, Set<String>) in try db.recordingTablesRead(fetch) }
        }
    }

    // MARK: - Maintenance

    /// How much a checkpoint does: SQLite's `PRAGMA wal_checkpoint` modes.
    public enum CheckpointMode: String, Sendable {
        /// Copies what it can without waiting for readers.
        case passive = "PASSIVE"
        /// Waits for the writer lock, then copies every frame it can.
        case full = "FULL"
        /// As `full`, then waits until readers are done with the WAL and starts it over.
        case restart = "RESTART"
        /// As `restart`, then truncates the WAL file to zero bytes.
        case truncate = "TRUNCATE"
    }

    /// Copies the WAL's frames into the database file (the pool also does
    /// this by itself, on a thread of its own, once the WAL holds 1,000
    /// pages), after any such background checkpoint under way. Returns
    /// whether every frame was copied: false when readers still use older ones.
    /// (A `PRAGMA wal_checkpoint` of your own in a write closure may find a
    /// background checkpoint running and report it busy: use this method,
    /// or a barrier, which wait for it.)
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess``, ``DatabaseError/connectionClosed``,
    ///   or the ``DatabaseError`` of the checkpoint.
    @discardableResult
    public func checkpoint(_ mode: CheckpointMode = .passive) throws -> Bool {
        try HeldQueues.checkWriterIsFree(self)
        // Not beside a background checkpoint, which would make it SQLITE_BUSY.
        return try writerQueue.sync {
            try checkpointer.paused {
                try onWriter { db in
                    guard let row = try db.fetchOne("PRAGMA main.wal_checkpoint(\(mode.rawValue))") else { return false }
                    let busy: Int = try row[0], frames: Int = try row[1], copied: Int = try row[2]
                    return busy == 0 && frames == copied
                }
            }
        }
    }

    /// Changes the key (and, with `newCipher`, the cipher settings) of the
    /// database: waits for the reads under way and keeps new ones waiting,
    /// re-encrypts the file through
    /// ``DatabaseEncryption/changeKey(_:from:cipher:to:newCipher:options:)``
    /// (a new file, checked, then renamed over the old one: a crash leaves
    /// the old or the new), and reopens the writer with the new key, derived
    /// once for it and the readers. Every read that begins after it returns
    /// uses the new key. On failure the pool goes on with the old key.
    ///
    /// - throws: ``DatabaseError/notEncrypted(path:)`` for a pool opened without
    ///   a key, ``DatabaseError/reentrantQueueAccess``, ``DatabaseError/connectionClosed``,
    ///   and the errors of the routine.
    public func changeKey(to newKey: DatabaseKey, newCipher: CipherSettings? = nil) throws {
        try HeldQueues.checkWriterIsFree(self)
        try writerQueue.sync {
            guard !writer.isClosed else { throw DatabaseError.connectionClosed }
            guard let currentCipher = writer.cipher, let currentKey = readerKey else { throw DatabaseError.notEncrypted(path: path) }
            guard continuousBackup == nil else {
                throw DatabaseError.misuse(reason: "the continuous backup is authenticated with the current key: close the pool, change the key, and start a backup to a new destination")
            }
            // The checkpoints' connection has the old key, and the old file.
            try withNoReadOrCheckpoint(closingCheckpointer: true) {
                closeIdleReaders()
                // The routine needs the file to itself.
                writer.close()
                // The writer again, as the pool opened it: WAL bounded, and
                // observed when observations had installed their hooks.
                func reopenWriter(key: DatabaseKey, cipher: CipherSettings) throws -> DatabaseKey? {
                    var options = writerOptions
                    options.tryOtherFormat = false
                    options.cipher = cipher
                    let reopened = try Database(path: path, key: key, options: options)
                    try Self.keepTheWALBounded(reopened, checkpointer: checkpointer)
                    if tracker != nil { tracker = try ChangeTracker.install(on: reopened.connection) }
                    writer = reopened
                    return reopened.keyForOtherConnections
                }
                do {
                    try DatabaseEncryption.changeKey(path, from: currentKey, cipher: currentCipher, to: newKey, newCipher: newCipher)
                } catch {
                    _ = try reopenWriter(key: currentKey, cipher: currentCipher)
                    throw error
                }
                let derived = try reopenWriter(key: newKey, cipher: newCipher ?? currentCipher)
                let cipher = writer.cipher ?? newCipher ?? currentCipher
                lock.withLock { _ in
                    readerKey = derived ?? newKey
                    readerOptions.cipher = cipher
                }
            }
        }
    }

    /// Runs `body` with what opens a connection as the readers are opened,
    /// for a backup's snapshot: it holds a reader's permit (a key change or
    /// closing waits for it, as for a read) and keeps the writer's commits
    /// from restarting the WAL while it reads (``BackgroundCheckpointer/holdingLongRead(_:)``).
    ///
    /// - throws: ``DatabaseError/connectionClosed`` after ``close()``, or what `body` throws.
    func withSnapshotOpening<T>(_ body: (SnapshotBackup) throws -> T) throws -> T {
        // Announced before the permit is taken: a commit that restarts the
        // WAL in between would wait for this read, which may last minutes.
        try checkpointer.holdingLongRead {
            readPermits.take()
            defer { readPermits.give() }
            let (closed, key, options) = lock.withLock { _ in (isClosed, readerKey, readerOptions) }
            guard !closed else { throw DatabaseError.connectionClosed }
            let snapshot = SnapshotBackup(path: path, openingKey: key, openingCipher: key == nil ? nil : options.cipher, openingOptions: options)
            return try HeldQueues.holding(self, as: .read) { try body(snapshot) }
        }
    }

    /// Closes the readers no read is using.
    private func closeIdleReaders() {
        let idle = lock.withLock { _ in
            defer { idleReaders.removeAll() }
            return idleReaders
        }
        for reader in idle { reader.database.close() }
    }

    /// Closes the idle readers and the connection that checkpoints in the
    /// background (they reopen when needed, with no key derivation) and
    /// frees the writer's cached statements.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess`` from inside the pool's closures.
    public func releaseMemory() throws {
        try HeldQueues.checkWriterIsFree(self)
        closeIdleReaders()
        checkpointer.paused(closing: true) {}
        writerQueue.sync { writer.clearStatementCache() }
    }

    /// Closes every connection once the reads and writes under way are done.
    /// Later calls throw ``DatabaseError/connectionClosed``; closing twice
    /// does nothing. Releasing the pool also closes it.
    ///
    /// - throws: ``DatabaseError/reentrantQueueAccess`` from inside the pool's closures.
    public func close() throws {
        try HeldQueues.checkWriterIsFree(self)
        var backupError: Error?
        writerQueue.sync {
            // The last commits are shipped (while no write runs) before the
            // writer, closing last, checkpoints the WAL away.
            if let continuousBackup, !lock.withLock({ _ in isClosed }) {
                do { try continuousBackup.stopShipping() } catch { backupError = error }
                checkpointer.endLongRead()
            }
            withNoReadOrCheckpoint(closingCheckpointer: true) {
                lock.withLock { _ in isClosed = true }
                closeIdleReaders()
                writer.close()
            }
        }
        if let backupError { throw backupError }
    }
}

/// A reader the pool holds (idle, or handed to the thread that runs a
/// concurrent read): used by one thread at a time.
private struct UncheckedDatabase: @unchecked Sendable {
    let database: Database
    init(_ database: Database) { self.database = database }
}

extension DatabasePool {
    /// Opens the pool with `configuration`'s reader count and continuous backup.
    ///
    /// - throws: see ``init(path:key:options:)``.
    @available(*, deprecated, message: "set maximumReaderCount and continuousBackup in Database.Options, and call init(path:key:options:)")
    public convenience init(path: String, key: DatabaseKey? = nil, options: Database.Options = Database.Options(), configuration: Configuration) throws {
        var options = options
        options.maximumReaderCount = configuration.maximumReaderCount
        options.continuousBackup = configuration.continuousBackup
        try self.init(path: path, key: key, options: options)
    }
}
