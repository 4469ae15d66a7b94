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
    /// Whether the connection was opened with a key.
    public var isEncrypted: Bool { cipher != nil }
    let connection: Connection
    private var statementCache: [String: Statement] = [:]
    var savepointDepth = 0

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
    ///   ``DatabaseError/cannotOpen(path:reason:)``; ``DatabaseError/invalidKey(reason:)``;
    ///   ``DatabaseError/notSQLCipher(sqliteVersion:)``;
    ///   ``DatabaseError/unsupportedCipherSetting(name:cipherVersion:)``.
    public init(path: String, key: DatabaseKey? = nil, options: Options = Options()) throws {
        let library = try CipherInfo.linked()
        if let key, key.isEmpty {
            throw DatabaseError.invalidKey(reason: "it is empty, which SQLCipher would take as no encryption at all")
        }
        let isMemory = path == ":memory:" || path.isEmpty
        var isExistingEncryptedFile = false
        if !isMemory {
            switch try FileFormat.detect(at: path) {
            case .missing where options.readOnly || !options.create:
                throw DatabaseError.fileNotFound(path: path)
            case .plaintext where key != nil:
                throw DatabaseError.notEncrypted(path: path)
            case .notPlaintext where key == nil:
                throw DatabaseError.keyRequired(path: path)
            case .notPlaintext:
                isExistingEncryptedFile = true
            default:
                break
            }
        }

        var settings = options.cipher
        var connection: Connection
        do {
            connection = try Self.connect(path: path, key: key, settings: settings, options: options, library: library)
        } catch DatabaseError.wrongKeyOrNotADatabase(path) where isExistingEncryptedFile && options.tryOtherFormat
            && library.formats.contains(options.cipher.format.other) {
            // The other standard format, on a fresh connection: a connection
            // whose first read failed cannot be re-keyed.
            settings = options.cipher.fallback
            connection = try Self.connect(path: path, key: key, settings: settings, options: options, library: library)
        }
        if options.journalMode != .default {
            try connection.run("PRAGMA journal_mode = \(options.journalMode.rawValue)")
        }

        self.path = path
        self.cipher = key == nil ? nil : settings
        self.connection = connection
    }

    /// Opens, keys, configures and reads one connection.
    private static func connect(
        path: String, key: DatabaseKey?, settings: CipherSettings, options: Options, library: CipherInfo
    ) throws -> Connection {
        var flags = SQLITE_OPEN_NOMUTEX
        flags |= options.readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (options.create ? SQLITE_OPEN_CREATE : 0)
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let error = Self.openError(path: path, code: code, handle: handle)
            if let handle { sqlite3_close_v2(handle) }
            throw error
        }
        let connection = Connection(handle: handle)
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, Int32(max(0, min(options.busyTimeout * 1000, Double(Int32.max)))))
        if let trace = options.trace { connection.installTrace(trace) }
        if let key { try connection.applyKey(key, settings: settings, library: library) }
        if options.lockExclusively { try connection.run("PRAGMA locking_mode = EXCLUSIVE") }
        try connection.verifyReadable(path: path)
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
        connection.close()
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { connection.isClosed }

    /// The error for a failed `sqlite3_open_v2`, from the system's errno.
    private static func openError(path: String, code: Int32, handle: OpaquePointer?) -> DatabaseError {
        let systemError = handle.map { sqlite3_system_errno($0) } ?? 0
        switch systemError {
        case EACCES, EPERM: return .permissionDenied(path: path)
        case EISDIR: return .isDirectory(path: path)
        case ENOENT: return .cannotOpen(path: path, reason: "its directory does not exist")
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
                statementCache[sql] = statement
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

    /// Prepares one statement for repeated use.
    ///
    /// - throws: ``DatabaseError/sqlite(code:message:sql:)`` when the SQL does
    ///   not compile, ``DatabaseError/invalidArguments(reason:sql:)`` when it
    ///   holds more than one statement, or none.
    public func makeStatement(_ sql: String) throws -> Statement {
        var result: Statement?
        try Statement.forEach(in: sql, on: connection) { statement, isOnly in
            guard isOnly else {
                throw DatabaseError.invalidArguments(reason: "makeStatement takes exactly one statement", sql: sql)
            }
            result = statement
        }
        guard let result else {
            throw DatabaseError.invalidArguments(reason: "the SQL holds no statement", sql: sql)
        }
        return result
    }

    /// The cached statement for `sql`, preparing and caching it on first use.
    /// A cached statement still being stepped by a cursor is not reused: a
    /// fresh, uncached one is prepared instead.
    func cachedStatement(_ sql: String) throws -> Statement {
        if let statement = try reusableCachedStatement(sql) { return statement }
        if statementCache[sql] != nil { return try makeStatement(sql) }
        let statement = try makeStatement(sql)
        statementCache[sql] = statement
        return statement
    }

    private func reusableCachedStatement(_ sql: String) throws -> Statement? {
        guard let statement = statementCache[sql] else { return nil }
        _ = try connection.open()
        return sqlite3_stmt_busy(statement.handle) == 0 ? statement : nil
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
