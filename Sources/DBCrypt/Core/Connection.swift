import CSQLCipher

/// Owns one `sqlite3` connection handle. Statements hold it strongly, so the
/// handle outlives every statement prepared on it; closing it turns every
/// later use into ``DatabaseError/connectionClosed``.
final class Connection {
    private var handle: OpaquePointer?
    /// Keeps the trace callback's context alive as long as the connection.
    var traceBox: TraceBox?
    /// The linked SQLCipher, for keying ATTACHed databases; nil on the probe's connections.
    var library: CipherInfo?
    /// The cipher settings an ATTACH with a key uses first: those that opened
    /// the main database, or the options' for a plaintext one.
    var attachSettings = CipherSettings.sqlcipher4
    /// The hooks that observation installs, kept alive as long as the connection.
    var changeTracker: ChangeTracker?
    /// The context of a pool's WAL hook, kept alive as long as the connection
    /// (a `Database` kept past its pool can still commit).
    var walHookContext: AnyObject?
    /// The file this connection holds for its process, recorded in
    /// `OpenFiles.exclusive` until it closes.
    var exclusiveFile: FileIdentity? {
        didSet { if let exclusiveFile { OpenFiles.exclusive.add(exclusiveFile) } }
    }
    /// The database file this connection opened, recorded in
    /// `OpenFiles.all` (by the opener, before the file was opened) until
    /// this object is gone: every statement holds it, so SQLite's real
    /// close, which `sqlite3_close_v2` defers to the last statement, is done.
    var openFile: FileIdentity?
    /// The files this connection attached, by schema name, recorded in
    /// `OpenFiles.all` as ``openFile`` is, until they are detached or this
    /// object is gone.
    var attachedFiles: [String: FileIdentity] = [:]
    /// Transaction control and the other fixed internal statements, each
    /// prepared once: a read or write transaction runs several of them.
    private var internalStatements: [String: OpaquePointer] = [:]
    /// The busy timeout the opener set, in milliseconds (see LockUpgrade.swift).
    var busyTimeoutMilliseconds: Int32 = 0
    /// Whether the database had a `-wal` when this connection opened it
    /// (opening a closed WAL database makes one: see Database.close()).
    var logExistedAtOpen = true
    /// The state of the polling busy handler, when the opener chose it (BusyPolling.swift).
    var busyPolling: BusyPolling?
    /// The interrupter handed out for this connection, if any (Database+Tools.swift).
    private var madeInterrupter: DatabaseInterrupter?

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        close()
        if let openFile { OpenFiles.all.remove(openFile) }
        for file in attachedFiles.values { OpenFiles.all.remove(file) }
    }

    /// A private in-memory connection, for probing the library.
    static func openInMemory() throws -> Connection {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(":memory:", &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
        guard code == SQLITE_OK, let handle else {
            if let handle { sqlite3_close_v2(handle) }
            throw DatabaseError.cannotOpen(path: ":memory:", reason: String(cString: sqlite3_errstr(code)))
        }
        return Connection(handle: handle)
    }

    /// The handle, or ``DatabaseError/connectionClosed``.
    func open() throws -> OpaquePointer {
        guard let handle else { throw DatabaseError.connectionClosed }
        return handle
    }

    var isClosed: Bool { handle == nil }

    /// The one interrupter of this connection, made on first use.
    func interrupter() throws -> DatabaseInterrupter {
        if let madeInterrupter { return madeInterrupter }
        let made = DatabaseInterrupter(try open())
        madeInterrupter = made
        return made
    }

    /// Closes the handle. `sqlite3_close_v2` defers the real close until the
    /// last statement still held somewhere is finalized.
    func close() {
        guard let handle else { return }
        if DamagedConnections.shared.remove(handle) {
            // Its WAL may be another database's: never checkpointed.
            return CheckpointBlock.closing(handle, vfs: vfsName) { closeHandle() }
        }
        closeHandle()
    }

    private func closeHandle() {
        guard let handle else { return }
        madeInterrupter?.invalidate()
        for statement in internalStatements.values { sqlite3_finalize(statement) }
        internalStatements.removeAll()
        sqlite3_close_v2(handle)
        self.handle = nil
        if let exclusiveFile { OpenFiles.exclusive.remove(exclusiveFile) }
    }

    /// The file layer the connection was opened with: `unix-excl` for a
    /// file held exclusively, else SQLite's default.
    private var vfsName: String? { exclusiveFile == nil ? nil : "unix-excl" }

    /// Closes the handle without letting SQLite checkpoint the WAL into the
    /// database file, as ``CheckpointBlock`` explains: the file, its `-wal`
    /// and `-shm` stay as they are.
    func closeWithoutCheckpoint() {
        guard let handle else { return }
        _ = DamagedConnections.shared.remove(handle)
        CheckpointBlock.closing(handle, vfs: vfsName) { closeHandle() }
    }

    /// Runs SQL that returns no rows and takes no arguments, for internal
    /// pragmas and transaction control.
    func run(_ sql: String) throws {
        let db = try open()
        let code = sqlite3_exec(db, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw DatabaseError.fromConnection(db, code: code, sql: sql) }
    }

    /// Finalizes the kept internal statements: after an ATTACH, a kept
    /// `BEGIN IMMEDIATE` would not lock the new database.
    func forgetInternalStatements() {
        for statement in internalStatements.values { sqlite3_finalize(statement) }
        internalStatements.removeAll()
    }

    /// Runs fixed internal SQL (one statement, no arguments; never a pragma,
    /// which SQLite evaluates when it prepares it) through a
    /// statement prepared on first use and kept; returns the first column of
    /// its first row as an integer, or nil when it returns no row.
    @discardableResult
    func runPrepared(_ sql: String) throws -> Int64? {
        let db = try open()
        let statement: OpaquePointer
        if let prepared = internalStatements[sql] {
            statement = prepared
        } else {
            var prepared: OpaquePointer?
            let code = sqlite3_prepare_v2(db, sql, -1, &prepared, nil)
            guard code == SQLITE_OK, let prepared else {
                sqlite3_finalize(prepared)
                throw DatabaseError.fromConnection(db, code: code, sql: sql)
            }
            internalStatements[sql] = prepared
            statement = prepared
        }
        defer { sqlite3_reset(statement) }
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return sqlite3_column_int64(statement, 0)
        case SQLITE_DONE: return nil
        case let code: throw DatabaseError.fromConnection(db, code: code, sql: sql)
        }
    }

    /// Runs one query and returns the first column of its first row, or nil
    /// when it returns no row (as SQLCipher 3.4.1 does for a pragma it does
    /// not know).
    func firstValue(_ sql: String) throws -> DatabaseValue? {
        var result: DatabaseValue?
        try Statement.forEach(in: sql, on: self) { statement, _ in
            if try statement.step(), statement.columnCount > 0 { result = statement.value(at: 0) }
            sqlite3_reset(statement.handle)
        }
        return result
    }

    /// The first column of the first row of `sql` as an integer, whether
    /// SQLite returns an integer or its decimal text (SQLCipher 4 answers
    /// `PRAGMA page_size` on a keyed connection as `cipher_page_size`, in
    /// text), or nil when there is no such row or it is not a number.
    func integerValue(_ sql: String) throws -> Int? {
        switch try firstValue(sql) {
        case let .integer(value)?: return Int(exactly: value)
        case let .text(text)?: return Int(text)
        default: return nil
        }
    }
}

/// The trace callback, boxed so SQLite can carry it as a `void *`.
final class TraceBox {
    let body: @Sendable (String) -> Void
    init(_ body: @escaping @Sendable (String) -> Void) { self.body = body }
}

extension Connection {
    /// Calls `body` with the unexpanded text of every statement run from now on.
    func installTrace(_ body: @escaping @Sendable (String) -> Void) {
        guard let db = try? open() else { return }
        let box = TraceBox(body)
        traceBox = box
        sqlite3_trace_v2(db, UInt32(SQLITE_TRACE_STMT), { _, context, _, text in
            guard let context, let text else { return 0 }
            let box = Unmanaged<TraceBox>.fromOpaque(context).takeUnretainedValue()
            box.body(String(cString: text.assumingMemoryBound(to: CChar.self)))
            return 0
        }, Unmanaged.passUnretained(box).toOpaque())
    }
}
