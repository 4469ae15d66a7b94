import Foundation

extension Database {
    /// How a database is opened.
    ///
    /// ```swift
    /// var options = Database.Options()
    /// options.journalMode = .wal
    /// options.busyTimeout = .seconds(5)
    /// let db = try Database(path: "notes.db", key: key, options: options)
    /// ```
    public struct Options: Sendable {
        /// Open the file read-only. Default: false.
        public var readOnly = false
        /// Create the file when it does not exist. Default: true; ignored when read-only.
        public var create = true
        /// How long to retry when another connection holds a lock before
        /// failing with `SQLITE_BUSY`, to the millisecond; none when zero or
        /// negative. Default: 5 seconds.
        public var busyTimeout: Duration = .seconds(5)
        /// Wait for a lock by trying every millisecond, not with SQLite's
        /// growing sleeps (BusyPolling.swift): for a connection that must get
        /// a shared lock beside a writer that never pauses.
        var pollsWhileBusy = false

        /// These options for another connection that reads and never writes
        /// the file (`query_only`): not read-only (a read-only connection to a
        /// WAL database cannot always read, nor remove a log), never creating
        /// the file or changing its journal mode, tracing nothing.
        var forAnotherReader: Options {
            var options = self
            options.readOnly = false
            options.queryOnly = true
            options.create = false
            options.journalMode = .default
            options.trace = nil
            return options
        }
        /// The journal mode. Default: SQLite's (a rollback journal); WAL is opt-in.
        public var journalMode: JournalMode = .default
        /// Cipher settings, applied right after the key. Default: SQLCipher 4's.
        /// An existing file that these do not open is tried with the other
        /// standard format before the key is declared wrong.
        public var cipher = CipherSettings.sqlcipher4
        /// Called with the text of every SQL statement the connection runs,
        /// from the first one on (keying itself runs no SQL). The text is the
        /// statement as written, with `?` for its arguments.
        public var trace: (@Sendable (String) -> Void)?
        /// How many prepared statements the connection keeps for SQL it runs
        /// again (`execute`, `query`, `fetch...`), the least recently used
        /// finalized first. SQL is kept from its second run on, so one-off
        /// SQL costs no memory after it ran. Each kept statement holds about
        /// 1-2 KB of SQLite's memory. Default: 100; 0 keeps none.
        public var statementCacheCapacity = 100
        /// A pool's: how many readers may read at once (at least 1), opened
        /// when first needed and kept for the next read. A connection and a
        /// queue have one connection and ignore it.
        public var maximumReaderCount: Int = max(2, ProcessInfo.processInfo.activeProcessorCount)

        /// A pool's: ship every commit to a backup destination while it is
        /// open (see ``ContinuousBackup``); nil (the default) for none. A
        /// connection and a queue ignore it.
        public var continuousBackup: ContinuousBackup.Configuration?

        /// Values for the `userInfo` of the decoders of this connection's
        /// records and `Decodable` rows, and for ``PlacedColumnValue``s
        /// (DBCryptSeal keeps the keys of sealed properties here).
        public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

        /// Keep other processes out of the file while this process has it
        /// open (SQLite's `unix-excl` file layer), as LevelDB and most
        /// embedded stores do. The first connection locks the whole file for
        /// the process; the process's other connections share that lock and
        /// keep their WAL index in its memory instead of the `-shm` file, so
        /// no read or commit takes a file lock of its own (in WAL mode a small
        /// read through the C API takes 0.4 of the time, a commit 0.65: W8 in
        /// BENCHMARKS.md).
        ///
        /// Another process (`dbcrypt`, the `sqlcipher` shell, a second copy
        /// of the app) gets `SQLITE_BUSY` at its first read, after its busy
        /// timeout, until the last connection of this process closes; and
        /// opening with this option waits, then throws
        /// ``DatabaseError/databaseInUse(path:)``, while another process has
        /// the file open in WAL mode or is in a transaction on it. Every
        /// connection of this process to the file must set it: a connection
        /// without it would release the process's lock, so opening one
        /// throws ``DatabaseError/invalidArguments(reason:sql:)``. A read-only
        /// connection cannot hold the lock, so opening one with this throws
        /// (as does a file that cannot be written). Default: false.
        public var exclusiveToThisProcess = false

        /// Open a database whose `-wal` holds committed transactions that
        /// SQLite would not read (``DatabaseError/damagedWriteAheadLog(path:reason:)``):
        /// SQLite reads the log up to the damage, and the next checkpoint
        /// drops the transactions after it for good. Default: false.
        public var acceptsDamagedWriteAheadLog = false

        /// Take and keep an exclusive lock from the first read on
        /// (`PRAGMA locking_mode = EXCLUSIVE` before it), for the encryption
        /// routines: no other connection may read or write the source meanwhile.
        var lockExclusively = false
        /// Refuse writes (`PRAGMA query_only`), for a pool's readers when they
        /// cannot be opened read-only (``exclusiveToThisProcess``).
        var queryOnly = false
        /// Read the main file alone, as if no `-wal` were beside it
        /// (read-only): to tell damage in the file from a log that is not its.
        var readsFileAlone = false
        /// Try the other standard format when `cipher` does not open an
        /// existing file. Off when checking a file just written with `cipher`.
        var tryOtherFormat = true

        /// The default options: read-write, create, 5 s busy timeout,
        /// rollback journal, the library's cipher defaults, 100 cached statements.
        public init() {}
    }

    /// A journal mode (`PRAGMA journal_mode`).
    public enum JournalMode: String, Sendable {
        /// Leave SQLite's default (`delete`, or what the file was left in).
        case `default`
        /// Rollback journal, deleted at each commit.
        case delete
        /// Write-ahead log: readers do not block the writer.
        case wal
    }
}
