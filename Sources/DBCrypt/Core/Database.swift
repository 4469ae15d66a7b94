import CSQLCipher
import Foundation

/// One connection to a SQLite database, encrypted with SQLCipher or not.
///
/// ```swift
/// let db = try Database(path: "notes.db", key: .passphrase(secret))
/// try db.execute("CREATE TABLE IF NOT EXISTS note(id INTEGER PRIMARY KEY, title TEXT)")
/// try db.execute("INSERT INTO note(title) VALUES (?)", ["Hello"])
/// let titles = try db.fetchAll(String.self, "SELECT title FROM note")
/// ```
///
/// Opening applies the key immediately after `sqlite3_open_v2`, then the
/// cipher settings, then reads the schema, and returns only when that read
/// succeeded: a wrong key is an error at open, never garbage later.
///
/// A `Database` is used from one thread at a time; to share a connection
/// between threads, use a ``DatabaseQueue``.
public final class Database {
    /// The path the database was opened at (`:memory:` for an in-memory one).
    public let path: String
    /// The cipher settings that opened the database (after trying the other
    /// standard format when the configured one did not); nil for a plaintext one.
    public let cipher: CipherSettings?
    /// The key this connection opened the file with: a passphrase derived
    /// once, as a raw key with the file's salt, opens further connections to
    /// the same file at no derivation cost (a pool's readers). Nil without a key.
    let keyForOtherConnections: DatabaseKey?
    /// The options this connection was opened with, to open another like it
    /// (a backup's snapshot).
    let openingOptions: Options
    /// Whether the connection was opened with a key.
    public var isEncrypted: Bool { cipher != nil }
    /// The options' ``Options/userInfo``, handed to the decoders of records
    /// and rows, and to the placed values of records, on this connection.
    public let userInfo: [CodingUserInfoKey: any Sendable]
    let connection: Connection
    private var statementCache: StatementCache
    /// While true (an observation records the tables a fetch reads), every
    /// statement is prepared anew so that SQLite's authorizer sees it.
    var isRecordingTablesRead = false
    var savepointDepth = 0
    /// The encoder parts records are bound with on this connection.
    lazy var recordBinding = RecordBinding()

    // MARK: - Opening and closing

    /// Opens (or creates) the database at `path`, keyed when `key` is given.
    ///
    /// - parameter path: a file path, or `:memory:` for a private in-memory database.
    /// - parameter key: the key of an encrypted database; nil for plaintext.
    /// - parameter options: read-only, create, busy timeout, journal mode, cipher settings.
    /// - throws: ``DatabaseError/wrongKeyOrNotADatabase(path:)`` when the key
    ///   does not decrypt the file; ``DatabaseError/notEncrypted(path:)`` for a
    ///   key on a plaintext file; ``DatabaseError/keyRequired(path:)`` for no key
    ///   on an encrypted file; ``DatabaseError/fileNotFound(path:)``,
    ///   ``DatabaseError/isDirectory(path:)``, ``DatabaseError/permissionDenied(path:)``,
    ///   ``DatabaseError/cannotOpen(path:reason:)``; ``DatabaseError/unfinishedTransaction(path:)``
    ///   when a read-only connection meets a transaction a stopped process left
    ///   unfinished; ``DatabaseError/damaged(path:reason:)`` when SQLite finds the
    ///   file malformed; ``DatabaseError/databaseInUse(path:)`` when another
    ///   process keeps it locked past `options.busyTimeout` (one that opened it
    ///   with ``Options/exclusiveToThisProcess``, or one writing in rollback
    ///   mode, or any that has it open in WAL mode); ``DatabaseError/misuse(reason:)`` for
    ///   `exclusiveToThisProcess` on a read-only connection, or without it on a file
    ///   this process holds with it; ``DatabaseError/permissionDenied(path:)``
    ///   for it on a file that cannot be written; ``DBCryptCore/CipherError/invalidKey(reason:)``;
    ///   ``DatabaseError/notSQLCipher(sqliteVersion:)``;
    ///   ``DatabaseError/unsupportedCipherSetting(name:cipherVersion:)``.
    public init(path: String, key: DatabaseKey? = nil, options: Options = Options()) throws {
        let library = try CipherInfo.linked()
        if let key, key.isEmpty {
            throw CipherError.invalidKey(reason: "it is empty, which SQLCipher would take as no encryption at all")
        }
        if options.exclusiveToThisProcess && options.readOnly {
            throw DatabaseError.misuse(
                reason: "a read-only connection cannot keep other processes out: open it read-write, or without exclusiveToThisProcess")
        }
        // Settings this engine cannot apply are refused before any file is made.
        if key != nil { _ = try options.cipher.pragmas(on: library) }
        var opened: (connection: Connection, settings: CipherSettings, key: DatabaseKey?)
        do {
            opened = try Self.open(path: path, key: key, options: options, library: library)
        } catch is NewFileCreatedMeanwhile {
            // Another connection gave the new file its header (and salt)
            // between our look at it and our write: open it as the existing
            // file it now is, on a fresh connection.
            do {
                opened = try Self.open(path: path, key: key, options: options, library: library)
            } catch is NewFileCreatedMeanwhile {
                throw DatabaseError.wrongKeyOrNotADatabase(path: path)
            }
        }
        let (connection, settings) = (opened.connection, opened.settings)
        if options.journalMode != .default {
            try connection.run("PRAGMA journal_mode = \(options.journalMode.rawValue)")
        }
        connection.library = library
        connection.attachSettings = key == nil ? options.cipher : settings

        self.path = path
        self.cipher = key == nil ? nil : settings
        keyForOtherConnections = opened.key
        openingOptions = options
        self.connection = connection
        userInfo = options.userInfo
        statementCache = StatementCache(capacity: options.statementCacheCapacity)
    }

    /// Looks at the file, then opens, keys and checks a connection: with the
    /// configured settings, then the other standard format's, a passphrase
    /// derived once for each (``OpeningKeys``); behind a plaintext header
    /// whose size the settings do not give, with each size in turn. Returns
    /// the connection, the settings that opened it, and the key it was
    /// opened with.
    private static func open(
        path: String, key: DatabaseKey?, options: Options, library: CipherInfo
    ) throws -> (connection: Connection, settings: CipherSettings, key: DatabaseKey?) {
        var options = options
        var isExistingEncryptedFile = false
        var isNewFile = false
        var isPlaintextFile = false
        var hasLog = false, isLive = false, triesHeaderSizes = false
        if path != ":memory:" && !path.isEmpty {
            let (format, hasPlaintextHeader) = try FileFormat.detectWithHeader(at: path)
            if case .plaintext = format { isPlaintextFile = true }
            switch format {
            case .missing where options.readOnly || !options.create:
                throw DatabaseError.fileNotFound(path: path)
            case .plaintext where key != nil:
                throw DatabaseError.notEncrypted(path: path)
            case .notPlaintext where key == nil:
                throw DatabaseError.keyRequired(path: path)
            case .notPlaintext:
                isExistingEncryptedFile = true
                // Encrypted bytes after a plaintext header: of the size the
                // settings give, else of each size in turn, iOS's 32 first.
                if options.cipher.plaintextHeaderSize == 0, hasPlaintextHeader {
                    options.cipher.plaintextHeaderSize = 32
                    triesHeaderSizes = true
                }
            case .missing, .empty:
                isNewFile = key != nil && !options.readOnly
            case .plaintext:
                break
            }
            if let key, isExistingEncryptedFile || isNewFile {
                try options.cipher.requireSalt(for: key, path: path, library: library)
            }
            // A log beside a file this process has open is live: it was
            // checked when the first connection opened it. One another
            // process has open is written meanwhile: SQLite reads it
            // under its locks, as it is.
            hasLog = (isPlaintextFile || isExistingEncryptedFile) && WriteAheadLogFile.hasFrames(besideDatabaseAt: path)
            isLive = hasLog && OpenFiles.all.contains(path) { WriteAheadLogFile.isOpenInAnotherProcess(besideDatabaseAt: path) }
            if hasLog && !isLive && !options.readsFileAlone && !options.acceptsDamagedWriteAheadLog {
                try WriteAheadLogFile.requireIntact(besideDatabaseAt: path)
            }
        }
        var keys = key.map { OpeningKeys($0, path: path) }
        if options.readsFileAlone {
            var readOnly = options
            readOnly.readOnly = true
            let keyForFile = keys?.existing(options.cipher)
            return (try connect(path: path, key: keyForFile, settings: options.cipher, options: readOnly, library: library,
                                writesHeader: false, ignoringLog: true), options.cipher, keyForFile)
        }
        if var keys, isExistingEncryptedFile, hasLog, !isLive {
            return try openBesideLog(path: path, keys: &keys, options: options, library: library, triesHeaderSizes: triesHeaderSizes)
        }
        return try openTryingFormats(path: path, keys: &keys, options: options, library: library, triesHeaderSizes: triesHeaderSizes, isNewFile: isNewFile,
                                     isExistingEncryptedFile: isExistingEncryptedFile, isPlaintextFile: isPlaintextFile)
    }

    /// Opens an encrypted file with a `-wal` beside it. The key is first
    /// tried on the file alone, the log ignored, which touches neither the
    /// log nor its index (`-shm`): a wrong key changes no file, not even the
    /// index SQLite would rebuild. Then every frame SQLite would read must
    /// authenticate with that key and those settings, or the log is not this
    /// database's; only then does the connection open the log. A file that
    /// does not open alone opens with the log when the log's frames
    /// authenticate with the key.
    private static func openBesideLog(
        path: String, keys: inout OpeningKeys, options: Options, library: CipherInfo, triesHeaderSizes: Bool
    ) throws -> (connection: Connection, settings: CipherSettings, key: DatabaseKey?) {
        let tried = options.cipher.toTry(on: library, otherFormat: options.tryOtherFormat, otherHeaderSizes: triesHeaderSizes)
        var readOnly = options
        readOnly.readOnly = true
        var fileAloneDamage: DatabaseError?
        for settings in tried {
            let keyForFile = keys.existing(settings)
            do {
                try connect(path: path, key: keyForFile, settings: settings, options: readOnly, library: library,
                            writesHeader: false, ignoringLog: true).close()
            } catch DatabaseError.wrongKeyOrNotADatabase(path) {
                continue
            } catch let error as DatabaseError where error.resultCode == SQLITE_CORRUPT {
                fileAloneDamage = error
                continue
            }
            try WriteAheadLogFile.requireFramesDecrypt(besideDatabaseAt: path, key: keyForFile, settings: settings)
            var exact = options
            exact.cipher = settings
            do {
                return (try connect(path: path, key: keyForFile, settings: settings, options: exact, library: library, writesHeader: false),
                        settings, keyForFile)
            } catch DatabaseError.wrongKeyOrNotADatabase(path) {
                throw DatabaseError.writeAheadLogDoesNotDecrypt(path: path)
            }
        }
        // The file alone does not open, but its log may say the key is
        // right: page 1 torn by a power loss mid-checkpoint, which the log
        // repairs, or a checkpoint of another process read half done.
        for settings in tried where WriteAheadLogFile.keyOpensLog(besideDatabaseAt: path, key: keys.existing(settings), settings: settings) {
            var exact = options
            exact.cipher = settings
            let keyForFile = keys.existing(settings)
            do {
                return (try connect(path: path, key: keyForFile, settings: settings, options: exact, library: library,
                                    writesHeader: false), settings, keyForFile)
            } catch DatabaseError.wrongKeyOrNotADatabase(path) {
                // The log vouched for the key: the file's first page is damaged.
                throw fileAloneDamage ?? DatabaseError.damaged(
                    path: path, reason: "its first page does not decrypt with the key its write-ahead log authenticates with")
            }
        }
        throw fileAloneDamage ?? DatabaseError.wrongKeyOrNotADatabase(path: path)
    }

    /// Opens, keys and checks a connection: a new file with the configured
    /// settings; an existing one with each of ``CipherSettings/toTry(on:otherFormat:otherHeaderSizes:)``
    /// in turn, on a fresh connection each (a connection whose first read
    /// failed cannot be re-keyed).
    private static func openTryingFormats(
        path: String, keys: inout OpeningKeys?, options: Options, library: CipherInfo, triesHeaderSizes: Bool,
        isNewFile: Bool, isExistingEncryptedFile: Bool, isPlaintextFile: Bool
    ) throws -> (connection: Connection, settings: CipherSettings, key: DatabaseKey?) {
        guard isExistingEncryptedFile, keys != nil else {
            let keyForFile = isNewFile ? keys?.new(options.cipher) : keys?.given
            do {
                return (try connect(path: path, key: keyForFile, settings: options.cipher, options: options, library: library,
                                    writesHeader: isNewFile), options.cipher, keyForFile)
            } catch DatabaseError.wrongKeyOrNotADatabase(path) where isPlaintextFile {
                // No key is involved: the file starts as a SQLite database does and is not one.
                throw DatabaseError.damaged(path: path, reason: "it starts as a SQLite database does, but its header is not valid")
            }
        }
        let tried = options.cipher.toTry(on: library, otherFormat: options.tryOtherFormat, otherHeaderSizes: triesHeaderSizes)
        // Once more when the file was replaced meanwhile, with keys derived from its new salt.
        for attempt in 0..<2 {
            for (index, settings) in tried.enumerated() {
                let keyForFile = keys!.existing(settings)
                do {
                    return (try connect(path: path, key: keyForFile, settings: settings, options: options, library: library,
                                        writesHeader: false), settings, keyForFile)
                } catch DatabaseError.wrongKeyOrNotADatabase(path) where index < tried.count - 1 || attempt == 0 {
                    continue
                }
            }
            guard keys!.forgetIfTheSaltChanged(options.cipher) else { break }
        }
        throw DatabaseError.wrongKeyOrNotADatabase(path: path)
    }

    /// Opens, keys, configures and reads one connection. With `writesHeader`,
    /// a new file gets its header and salt before the connection is handed
    /// out, so that every later connection derives its key from that salt.
    ///
    /// With `ignoringLog`, the connection reads the main file alone, as if
    /// no `-wal` were beside it (SQLite's `immutable` file name parameter:
    /// read-only, no locks, no log): to tell a wrong key from a log that is
    /// not the file's.
    private static func connect(
        path: String, key: DatabaseKey?, settings: CipherSettings, options: Options, library: CipherInfo,
        writesHeader: Bool, ignoringLog: Bool = false
    ) throws -> Connection {
        var flags = SQLITE_OPEN_NOMUTEX
        flags |= options.readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (options.create ? SQLITE_OPEN_CREATE : 0)
        if !options.exclusiveToThisProcess && OpenFiles.exclusive.contains(path) {
            throw DatabaseError.misuse(
                reason: "\(path) is open in this process with exclusiveToThisProcess: open every connection to it with that option")
        }
        var handle: OpaquePointer?
        let name = ignoringLog ? FilePaths.immutableURI(path) : path
        if ignoringLog { flags |= SQLITE_OPEN_URI }
        // Recorded before SQLite opens it (see OpenFiles.all); a file that
        // SQLite creates, right after.
        var fileID = ignoringLog ? nil : FileIdentity(path)
        if let fileID { OpenFiles.all.add(fileID) }
        // Opening a closed WAL database makes its log (see close()).
        let logExisted = ignoringLog || access(CompanionFile.wal.path(of: path), F_OK) == 0
        let code = sqlite3_open_v2(name, &handle, flags, options.exclusiveToThisProcess ? "unix-excl" : nil)
        guard code == SQLITE_OK, let handle else {
            let error = Self.openError(path: path, code: code, handle: handle)
            if let handle { sqlite3_close_v2(handle) }
            if let fileID { OpenFiles.all.remove(fileID) }
            throw error
        }
        if fileID == nil && !ignoringLog, let created = FileIdentity(path) {
            fileID = created
            OpenFiles.all.add(created)
        }
        let connection = Connection(handle: handle)
        connection.openFile = fileID
        connection.logExistedAtOpen = logExisted
        if options.exclusiveToThisProcess && !ignoringLog && sqlite3_db_readonly(handle, "main") == 1 {
            // SQLite fell back to read-only (a read-only file or file system):
            // such a connection cannot hold the process's lock.
            connection.close()
            throw DatabaseError.permissionDenied(path: path)
        }
        if options.exclusiveToThisProcess { connection.exclusiveFile = FileIdentity(path) }
        sqlite3_extended_result_codes(handle, 1)
        connection.busyTimeoutMilliseconds = options.busyTimeout.busyTimeoutMilliseconds
        sqlite3_busy_timeout(handle, connection.busyTimeoutMilliseconds)
        if options.pollsWhileBusy { connection.pollWhileBusy(handle) }
        if let trace = options.trace { connection.installTrace(trace) }
        do {
            if let key { try connection.applyKey(key, settings: settings, library: library) }
            // Sorts, indexes being built and temporary tables stay in memory:
            // SQLCipher encrypts only the database and its journals, and some
            // builds (Debian 13's) put temporary files on disk by default.
            try connection.run("PRAGMA temp_store = MEMORY")
            if options.lockExclusively { try connection.run("PRAGMA locking_mode = EXCLUSIVE") }
            if options.queryOnly { try connection.run("PRAGMA query_only = 1") }
            if writesHeader {
                do {
                    try connection.writeHeaderOfNewFile()
                } catch let error as DatabaseError where error.resultCode == SQLITE_BUSY {
                    throw DatabaseError.databaseInUse(path: path)
                }
            }
            try connection.verifyReadable(path: path, behindPlaintextHeader: key != nil && settings.plaintextHeaderSize > 0)
        } catch {
            // A failed open changes nothing: with a wrong key, SQLite's
            // checkpoint on close would still copy the log into the file.
            connection.closeWithoutCheckpoint()
            throw error
        }
        return connection
    }

    /// Opens a private in-memory database, keyed when `key` is given.
    ///
    /// - throws: see ``init(path:key:options:)``.
    public static func inMemory(key: DatabaseKey? = nil, options: Options = Options()) throws -> Database {
        try Database(path: ":memory:", key: key, options: options)
    }

    deinit {
        close()
    }

    /// Closes the connection. Later calls throw ``DatabaseError/connectionClosed``;
    /// closing twice does nothing.
    public func close() {
        statementCache.removeAll()
        let removesLog = openingOptions.readOnly && madeEmptyLog
        connection.close()
        if removesLog { removeLogMadeByReading() }
    }

    /// Whether the database had no log when this connection opened it, and
    /// its log is still empty: the connection's opening made it.
    private var madeEmptyLog: Bool {
        var log = stat()
        return !connection.logExistedAtOpen && !connection.isClosed && stat(CompanionFile.wal.path(of: path), &log) == 0 && log.st_size == 0
    }

    /// Opening a closed WAL database makes an empty log and its index beside
    /// it. A connection that may write removes them when it closes last
    /// (after a checkpoint, here of nothing); a read-only one cannot. For
    /// it, one that may write is opened and closed here, when this process
    /// may write the file and its folder: SQLite removes both when no other
    /// connection has the database open, and leaves them otherwise.
    private func removeLogMadeByReading() {
        guard access(path, W_OK) == 0, access(CompanionFile.directory(of: path), W_OK) == 0 else { return }
        var options = openingOptions.forAnotherReader
        options.tryOtherFormat = false
        if let cipher { options.cipher = cipher }
        try? Database(path: path, key: keyForOtherConnections, options: options).close()
    }

    /// Closes the connection without the checkpoint SQLite runs when the last
    /// connection to a database in WAL mode closes: the file, its `-wal` and
    /// its `-shm` stay as they are, and the log's commits stay in the log,
    /// where the next connection reads them. Use it after a failure, or when
    /// the database must not change because it was only read. A log that
    /// this connection's opening made (the database was closed) and that is
    /// still empty goes as ``close()`` removes it. Statements
    /// still held by a cursor delay the real close past this call, and with
    /// it the protection: finish them first. A connection in exclusive
    /// locking mode (`PRAGMA locking_mode = EXCLUSIVE`) checkpoints anyway:
    /// it holds the lock that would keep it from doing so. Later calls throw
    /// ``DatabaseError/connectionClosed``.
    public func closeWithoutCheckpoint() {
        // A log this connection's opening made, still empty, holds nothing a
        // checkpoint could copy: the close that removes it changes nothing.
        if madeEmptyLog { return close() }
        statementCache.removeAll()
        connection.closeWithoutCheckpoint()
    }

    /// Finalizes every cached statement, which frees the memory SQLite holds
    /// for them. Statements still in use by a cursor stay valid.
    public func clearStatementCache() {
        statementCache.removeAll()
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { connection.isClosed }

    /// The error for a failed `sqlite3_open_v2`, from the system's errno.
    private static func openError(path: String, code: Int32, handle: OpaquePointer?) -> DatabaseError {
        let systemError = handle.map { sqlite3_system_errno($0) } ?? 0
        switch systemError {
        case EACCES, EPERM: return .permissionDenied(path: path)
        case EISDIR: return .isDirectory(path: path)
        case ENOENT:
            // SQLite's last try may have been a read-only open of a file it could not create.
            let folder = (path as NSString).deletingLastPathComponent
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.isEmpty ? "." : folder, isDirectory: &isDirectory),
                  isDirectory.boolValue else { return .cannotOpen(path: path, reason: "its directory does not exist") }
            if access(folder.isEmpty ? "." : folder, W_OK) != 0 { return .permissionDenied(path: folder.isEmpty ? "." : folder) }
            return .cannotOpen(path: path, reason: String(cString: strerror(ENOENT)))
        case 0: return .cannotOpen(path: path, reason: String(cString: sqlite3_errstr(code)))
        default: return .cannotOpen(path: path, reason: String(cString: strerror(systemError)))
        }
    }

    // MARK: - Executing

    /// Runs SQL that returns no rows: one statement with arguments, or several
    /// separated by semicolons without arguments.
    ///
    /// ```swift
    /// try db.execute("INSERT INTO note(title) VALUES (?)", ["Hello"])
    /// ```
    /// - throws: ``DatabaseError/sqlite(code:message:sql:)`` with the failing
    ///   statement, or ``DatabaseError/invalidArguments(reason:sql:)``.
    public func execute(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws {
        if let statement = try reusableCachedStatement(sql) {
            try statement.execute(arguments)
            return
        }
        try Statement.forEach(in: sql, on: connection) { statement, isOnly in
            if isOnly {
                if !isRecordingTablesRead { statementCache.offer(statement, for: sql) }
                try statement.execute(arguments)
            } else {
                guard arguments.isEmpty else {
                    throw DatabaseError.invalidArguments(
                        reason: "arguments can only be given with a single statement", sql: statement.sql)
                }
                try statement.execute()
            }
        }
    }

    /// Prepares one statement for repeated use. Trailing whitespace,
    /// semicolons and comments are not a second statement.
    ///
    /// - throws: ``DatabaseError/sqlite(code:message:sql:)`` when the SQL does
    ///   not compile, ``DatabaseError/invalidArguments(reason:sql:)`` when it
    ///   holds more than one statement, or none.
    public func makeStatement(_ sql: String) throws -> Statement {
        var result: Statement?
        try Statement.forEach(in: sql, on: connection) { statement, isOnly in
            guard isOnly else {
                throw DatabaseError.invalidArguments(
                    reason: "makeStatement takes exactly one statement", sql: SQLText.redactingLiterals(in: sql))
            }
            result = statement
        }
        guard let result else {
            throw DatabaseError.invalidArguments(reason: "the SQL holds no statement", sql: SQLText.redactingLiterals(in: sql))
        }
        return result
    }

    /// The statement for `sql`: the cached one when it is there and not being
    /// stepped by a cursor, else a new one, which the cache keeps once the
    /// same SQL has been seen twice (see ``Options/statementCacheCapacity``).
    /// With ``Statement/execute(values:)`` and ``Statement/query(values:)``,
    /// the fast path for SQL run many times with no argument array per call:
    ///
    /// ```swift
    /// try db.cachedStatement("UPDATE note SET title = ? WHERE id = ?").execute(values: title, id)
    /// ```
    /// Use it at once: the cache may hand the same statement to the next caller.
    ///
    /// - throws: see ``makeStatement(_:)``.
    public func cachedStatement(_ sql: String) throws -> Statement {
        if let statement = try reusableCachedStatement(sql) { return statement }
        let statement = try makeStatement(sql)
        if !isRecordingTablesRead { statementCache.offer(statement, for: sql) }
        return statement
    }

    /// The number of statements the cache keeps now.
    var cachedStatementCount: Int { statementCache.count }

    private func reusableCachedStatement(_ sql: String) throws -> Statement? {
        guard !isRecordingTablesRead, let statement = statementCache.statement(for: sql) else { return nil }
        _ = try connection.open()
        return statement.isStepping || sqlite3_stmt_busy(statement.handle) != 0 ? nil : statement
    }

    // MARK: - Connection state

    /// The rowid of the last row inserted on this connection.
    public var lastInsertRowID: Int64 {
        (try? connection.open()).map { sqlite3_last_insert_rowid($0) } ?? 0
    }

    /// The number of rows the last INSERT, UPDATE or DELETE changed.
    public var changes: Int {
        (try? connection.open()).map { Int(sqlite3_changes($0)) } ?? 0
    }

    /// The number of rows changed since the connection opened.
    public var totalChanges: Int {
        (try? connection.open()).map { Int(sqlite3_total_changes($0)) } ?? 0
    }

    /// Whether a transaction is open on this connection.
    public var isInsideTransaction: Bool {
        (try? connection.open()).map { sqlite3_get_autocommit($0) == 0 } ?? false
    }
}

extension Duration {
    /// The duration as SQLite's busy timeout: whole milliseconds, 0 for a
    /// negative one, at most `Int32.max`.
    var busyTimeoutMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        guard self > .zero else { return 0 }
        guard seconds < Int64(Int32.max / 1000) else { return Int32.max }
        return Int32(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}
