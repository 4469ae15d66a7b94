import CSQLCipher
import Foundation

/// One run of `sqlcipher_export` from a source database to a new file that
/// replaces the destination: the engine behind every encryption routine.
///
/// What holds, whenever the process dies: the destination path holds either
/// what it held before, or the complete, checked new database. That follows
/// from the order of the steps:
///
/// 1. In place, the source is opened with an exclusive lock kept until the
///    end, so no other connection writes it meanwhile (or we refuse, "in
///    use"), and its WAL (authenticated with the key at open, or checked
///    with `quick_check` for a plaintext file) is checkpointed and
///    truncated: no frame can be left behind that a later open would apply
///    to the new file. An export to another file reads its source in one
///    transaction instead, and never checkpoints it.
/// 2. The new database is written to a sibling file (same directory, so the
///    final rename is atomic; mode 0600; a name that marks it as ours), with
///    `ATTACH ? AS target KEY ?`: both bound, and the KEY always present,
///    because an ATTACH without one inherits the main key only sometimes.
/// 3. `sqlcipher_export` copies schema and rows but not `user_version`,
///    `application_id` or `auto_vacuum`: those are copied by hand.
/// 4. The new file is flushed to disk, re-opened on a fresh connection with
///    the new key and checked (`quick_check`: every page read, so decrypted
///    and authenticated, and every b-tree whole; schema, every table's row
///    count, the header values) before anything is replaced.
/// 5. `rename` puts it over the destination, and the directory is flushed so
///    the rename survives a power loss. Only then is the source released.
///
/// A failure or cancellation at any step removes the sibling file and leaves
/// the source and destination as they were.
struct Export {
    var sourcePath: String
    var sourceKey: DatabaseKey?
    var sourceCipher: CipherSettings
    var destinationPath: String
    var destinationKey: DatabaseKey?
    /// The new file's settings; nil keeps the source's (the settings that opened it).
    var destinationCipher: CipherSettings?
    var options: ExportOptions
    /// Whether the routine replaces its own source (migrate in place, change
    /// key); otherwise the destination must be another file.
    var inPlace: Bool
    /// The destination as it was resolved.
    var replacement: Replacement? = nil
    /// What an export to another file opens its source with, before the
    /// source's settings and the busy timeout are applied: a backup opens
    /// its snapshot as the app's own connections are opened.
    var sourceOptions = Database.Options()

    static let target = "dbcrypt_target"

    func run() throws {
        var job = self
        try job.resolvePaths()
        try job.export()
    }

    /// Makes the paths name the files the user means: an in-place routine
    /// works on a symbolic link's target, which it may write and which has no
    /// other names (unless allowed); an existing destination that is a link
    /// is its target, and it must not be the source by any name.
    private mutating func resolvePaths() throws {
        let replacement = try Replacement(destination: inPlace ? sourcePath : destinationPath, inPlace: inPlace, source: sourcePath,
                                          options: options)
        if inPlace { sourcePath = replacement.path }
        destinationPath = replacement.path
        self.replacement = replacement
    }

    private func export() throws {
        let library = try CipherInfo.linked()
        try checkDestination()
        SiblingFile.removeAbandoned(beside: destinationPath)
        try checkFreeSpace()
        try checkCancelled()

        if inPlace { try verifyPlaintextLogBeforeCheckpoint() }
        let source = try openSource()
        // A source that is only read is left byte for byte as it was, its
        // WAL included, whatever happens; an in-place source has its WAL
        // folded in at open.
        defer { inPlace ? source.close() : source.closeWithoutCheckpoint() }
        let cipher = destinationCipher ?? source.cipher ?? .sqlcipher4
        // A passphrase is derived once, here; the new file is written and
        // checked with the resulting raw key and salt, and opens later with
        // the passphrase.
        if let destinationKey { try cipher.requireSalt(for: destinationKey, path: destinationPath, library: library) }
        let writingKey = destinationKey.map { $0.derivedForNewFile(cipher) ?? $0 }
        var facts: SourceFacts?

        guard let replacement else { throw DatabaseError.misuse(reason: "an export's paths are resolved before it runs") }
        var progress: ProgressReporter?
        try replacement.replace(cancellation: options.cancellation, write: { newFile in
            progress = ProgressReporter(path: newFile, callback: options.progress, cancellation: options.cancellation)
            facts = try write(from: source, to: newFile, key: writingKey, cipher: cipher, library: library, progress: progress!)
        }, check: { newFile in
            try verify(newFile, key: writingKey, cipher: cipher, against: facts!)
            if facts!.isWriteAheadLog { try Self.setWriteAheadLogMode(of: newFile, key: writingKey, cipher: cipher) }
            try checkCancelled()
            if inPlace { try source.connection.run("PRAGMA main.wal_checkpoint(TRUNCATE)") }
        })
        if inPlace {
            // Closing the old file's last connection deletes its (empty) WAL by
            // name; its shared-memory index is left for us to remove.
            source.close()
            WriteAheadLogFile.removeIfEmpty(besideDatabaseAt: destinationPath)
        }
        progress?.finish()
    }

    /// `sqlcipher_export` writes the new file in rollback-journal mode: a
    /// source in WAL mode gives the checked new file its mode before the
    /// rename (a setting kept in the file's header, as a pool and a
    /// continuous backup expect it), so that a process killed at any instant
    /// leaves the destination as it was or the new file whole, never a
    /// journal of the switch beside it.
    ///
    /// - throws: what opening the new file throws, or
    ///   ``DatabaseError/verificationFailed(path:reason:)`` if it keeps a log.
    static func setWriteAheadLogMode(of path: String, key: DatabaseKey?, cipher: CipherSettings) throws {
        var options = Database.Options()
        options.create = false
        options.cipher = cipher
        options.tryOtherFormat = false
        options.journalMode = .wal
        try Database(path: path, key: key, options: options).close()
        // The last connection's close folds the (empty) log in and deletes it.
        guard WriteAheadLogFile.removeIfEmpty(besideDatabaseAt: path) else {
            throw DatabaseError.verificationFailed(path: path, reason: "switching it to WAL mode left a log beside it")
        }
    }

    // MARK: - Before writing

    private func checkDestination() throws {
        guard !inPlace else { return }
        switch try FileFormat.detect(at: destinationPath) {
        case .missing: break
        default:
            guard options.replaceExisting else { throw DatabaseError.destinationExists(path: destinationPath) }
        }
        let folder = SiblingFile.directory(of: destinationPath)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw DatabaseError.cannotOpen(path: destinationPath, reason: "its directory does not exist")
        }
        guard access(folder, W_OK) == 0 else { throw DatabaseError.permissionDenied(path: folder) }
    }

    /// About 1.2 times the source (with its WAL), checked before any work.
    private func checkFreeSpace() throws {
        let sourceBytes = SiblingFile.size(of: sourcePath) + SiblingFile.size(of: CompanionFile.wal.path(of: sourcePath))
        let needed = sourceBytes + sourceBytes / 5
        if let available = SiblingFile.availableBytes(near: destinationPath), available < needed {
            throw DatabaseError.insufficientSpace(path: destinationPath, needed: needed, available: available)
        }
    }

    private func checkCancelled() throws {
        if options.cancellation?.isCancelled == true { throw DatabaseError.cancelled }
    }

    /// An in-place routine folds the source's WAL into the file at open,
    /// where SQLite copies its frames as they are; its exclusive lock keeps
    /// that checkpoint from being held back on failure. An encrypted
    /// source's log has had every frame authenticated with the key when it
    /// opened. A plaintext one has no HMAC: it is read first through a
    /// read-only connection, which never checkpoints, and every page in
    /// use, in its latest version, must pass `quick_check`; a log that fails
    /// where the file alone passes is another database's, or damaged, and
    /// stays as it is.
    ///
    /// - throws: ``DatabaseError/damagedWriteAheadLog(path:reason:)``,
    ///   ``DatabaseError/damaged(path:reason:)``, or the open's errors.
    private func verifyPlaintextLogBeforeCheckpoint() throws {
        guard sourceKey == nil, WriteAheadLogFile.hasFrames(besideDatabaseAt: sourcePath) else { return }
        var readOptions = Database.Options()
        readOptions.readOnly = true
        readOptions.busyTimeout = options.busyTimeout
        let reader = try Database(path: sourcePath, options: readOptions)
        let problem = Self.quickCheckProblem(reader)
        reader.closeWithoutCheckpoint()
        guard let problem else { return }
        // The file alone, the log ignored, tells where the damage is.
        readOptions.readsFileAlone = true
        if let file = try? Database(path: sourcePath, options: readOptions), Self.quickCheckProblem(file) == nil {
            throw DatabaseError.damagedWriteAheadLog(
                path: sourcePath, reason: "the database read through it fails SQLite's check (\(problem)); it may be another database's")
        }
        throw DatabaseError.damaged(path: sourcePath, reason: problem)
    }

    /// What `quick_check` finds wrong with `db`, or nil when it is whole.
    private static func quickCheckProblem(_ db: Database) -> String? {
        do {
            let problems = try db.integrityProblems(quick: true)
            return problems.isEmpty ? nil : problems.prefix(3).joined(separator: "; ")
        } catch {
            return "\(error)"
        }
    }

    /// Opens the source. In place, with an exclusive lock held until it is
    /// closed, and its WAL emptied into the main file, so that no frame can
    /// be left for the new file. Otherwise as it is, WAL and all: the export
    /// reads it in one transaction (a snapshot in WAL mode, a shared lock
    /// that keeps writers waiting in rollback mode), and nothing checkpoints
    /// it. A source this process may only read must have an empty WAL
    /// (SQLite needs write access to the WAL's index).
    private func openSource() throws -> Database {
        var sourceOptions = inPlace ? Database.Options() : self.sourceOptions
        sourceOptions.create = false
        sourceOptions.cipher = sourceCipher
        sourceOptions.busyTimeout = options.busyTimeout
        if !inPlace {
            if access(sourcePath, W_OK) != 0 && SiblingFile.size(of: CompanionFile.wal.path(of: sourcePath)) != 0 {
                // A checkpointed WAL keeps its size until the last connection
                // closes, so this refuses to guess.
                throw DatabaseError.uncheckpointedReadOnlySource(path: sourcePath)
            }
            // Not SQLITE_OPEN_READONLY, which would make the attached new file
            // read-only too: SQLite opens a file it may not write read-only
            // by itself, and the main database alone is then read-only.
            do {
                return try Database(path: sourcePath, key: sourceKey, options: sourceOptions)
            } catch let error as DatabaseError where error.resultCode == SQLITE_BUSY || error.resultCode == SQLITE_LOCKED {
                throw DatabaseError.databaseInUse(path: sourcePath)
            }
        }
        sourceOptions.lockExclusively = true
        do {
            let source = try Database(path: sourcePath, key: sourceKey, options: sourceOptions)
            // In rollback mode the first read took only a shared lock: a write
            // transaction makes it exclusive, and exclusive locking mode keeps it.
            try source.connection.run("BEGIN EXCLUSIVE; COMMIT")
            try source.connection.run("PRAGMA main.wal_checkpoint(TRUNCATE)")
            return source
        } catch let error as DatabaseError where error.resultCode == SQLITE_BUSY || error.resultCode == SQLITE_LOCKED {
            throw DatabaseError.databaseInUse(path: sourcePath)
        }
    }

    // MARK: - Writing

    /// Writes the new file and returns the facts of the source it was
    /// written from, read in the same transaction.
    private func write(
        from source: Database, to newFile: String, key: DatabaseKey?, cipher: CipherSettings,
        library: CipherInfo,
        progress: ProgressReporter
    ) throws -> SourceFacts {
        let connection = source.connection
        try connection.attaching(cipher) { try attach(newFile, key: key, to: source) }
        defer { try? connection.run("DETACH DATABASE \(Self.target)") }

        let target = Self.target
        if key != nil {
            try connection.applyCipherSettings(cipher, library: library, schema: target)
        }
        // The sibling is thrown away if anything fails, so it needs no journal
        // and no syncs while it is written; it is flushed once at the end.
        // auto_vacuum takes effect only outside a transaction; the check of
        // the new file compares it with the value read in the transaction.
        let autoVacuum = try source.fetchScalar(Int.self, "PRAGMA main.auto_vacuum") ?? 0
        try connection.run("""
            PRAGMA \(target).journal_mode = OFF;
            PRAGMA \(target).synchronous = OFF;
            PRAGMA \(target).cache_size = 256;
            PRAGMA \(target).auto_vacuum = \(autoVacuum);
            """)
        let handle = try connection.open()
        do {
            // In place, the source is locked exclusively already; otherwise
            // its facts and rows are read in one transaction: one snapshot.
            try connection.run(inPlace ? "BEGIN EXCLUSIVE" : "BEGIN DEFERRED")
            let facts = try SourceFacts(source)
            try requireNothingPastTheLastPage(facts)
            let pageSize: Int
            if key != nil {
                pageSize = cipher.effectivePageSize
            } else {
                pageSize = try source.connection.integerValue("PRAGMA \(target).page_size") ?? 4096
            }
            progress.start(pageSize: pageSize, total: max(1, (facts.usedBytes + pageSize - 1) / pageSize))
            let context = Unmanaged.passUnretained(progress).toOpaque()
            sqlite3_progress_handler(handle, 1000, { context in
                Unmanaged<ProgressReporter>.fromOpaque(context!).takeUnretainedValue().tick() ? 1 : 0
            }, context)
            defer { sqlite3_progress_handler(handle, 0, nil, nil) }

            _ = try connection.firstValue("SELECT sqlcipher_export('\(target)')")
            try connection.run("""
                PRAGMA \(target).user_version = \(facts.userVersion);
                PRAGMA \(target).application_id = \(facts.applicationID);
                """)
            try connection.run("COMMIT")
            return facts
        } catch {
            // sqlcipher_export reports a failed write as a plain SQLITE_ERROR;
            // the system's errno tells a full disk from other failures.
            let systemError = sqlite3_system_errno(handle)
            if source.isInsideTransaction { try? connection.run("ROLLBACK") }
            throw translate(error, systemError: systemError)
        }
    }

    /// Refuses a source file longer than its pages (junk appended, or a
    /// damaged header), as a page-by-page verification does: no SQLite reads those bytes,
    /// and a copy would drop them without a word. With frames in its log
    /// the file may be longer until the next checkpoint truncates it.
    ///
    /// - throws: ``DatabaseError/damaged(path:reason:)``.
    private func requireNothingPastTheLastPage(_ facts: SourceFacts) throws {
        guard !WriteAheadLogFile.hasFrames(besideDatabaseAt: sourcePath) else { return }
        let extra = SiblingFile.size(of: sourcePath) - Int64(facts.pageBytes)
        if extra > 0 {
            throw DatabaseError.damaged(
                path: sourcePath, reason: "\(extra) bytes past its last page, which no SQLite reads: a page-by-page verification names them")
        }
    }

    /// `ATTACH ? AS dbcrypt_target KEY ?`, the key bound straight from the
    /// key's own memory; an empty KEY makes the new file plaintext.
    private func attach(_ path: String, key: DatabaseKey?, to source: Database) throws {
        let statement = try source.makeStatement("ATTACH DATABASE ? AS \(Self.target) KEY ?")
        try statement.bind(.text(path), at: 1)
        guard let key else {
            try statement.bind(.text(""), at: 2)
            return try statement.stepToCompletion()
        }
        try key.withSQLCipherKey { bytes, length in
            // SQLITE_STATIC: SQLite reads the key from our memory, which
            // outlives the statement, and keeps no copy of its own.
            let code = sqlite3_bind_blob(statement.handle, 2, bytes, length, nil)
            guard code == SQLITE_OK else {
                throw DatabaseError.fromConnection(sqlite3_db_handle(statement.handle), code: code, sql: statement.sql)
            }
            defer { sqlite3_clear_bindings(statement.handle) }
            try statement.stepToCompletion()
        }
    }

    /// Cancellation, a full disk, a file-size limit and a damaged source get their own errors.
    private func translate(_ error: Error, systemError: Int32) -> Error {
        if options.cancellation?.isCancelled == true { return DatabaseError.cancelled }
        if systemError == EFBIG { return DatabaseError.fileSizeLimit(path: destinationPath) }
        if [ENOSPC, EDQUOT].contains(systemError) { return DatabaseError.diskFull(path: destinationPath) }
        guard let error = error as? DatabaseError else { return error }
        switch error {
        case _ where error.resultCode == SQLITE_INTERRUPT: return DatabaseError.cancelled
        case _ where error.resultCode == SQLITE_FULL: return DatabaseError.diskFull(path: destinationPath)
        // The new file is written, not read: a malformed page is the source's.
        case let .sqlite(code, message, _) where code & 0xFF == SQLITE_CORRUPT:
            return DatabaseError.damaged(path: sourcePath, reason: message)
        // sqlcipher_export reports a failed write as SQLITE_ERROR with
        // SQLite's sentence for SQLITE_FULL, and errno is not always kept.
        case let .sqlite(_, message, _) where message.contains(String(cString: sqlite3_errstr(SQLITE_FULL))):
            return DatabaseError.diskFull(path: destinationPath)
        default: return error
        }
    }

    // MARK: - Checking the new file

    private func verify(_ path: String, key: DatabaseKey?, cipher: CipherSettings, against facts: SourceFacts) throws {
        try Self.verifyCopy(path, key: key, cipher: cipher, against: facts, source: sourcePath)
    }

    /// Checks the new file at `path` against `facts` of the source at `source`.
    ///
    /// - throws: ``DatabaseError/verificationFailed(path:reason:)`` naming `source`.
    static func verifyCopy(_ path: String, key: DatabaseKey?, cipher: CipherSettings, against facts: SourceFacts, source sourcePath: String) throws {
        var options = Database.Options()
        options.readOnly = true
        options.cipher = cipher
        options.tryOtherFormat = false
        let copy: Database
        do {
            copy = try Database(path: path, key: key, options: options)
        } catch DatabaseError.damaged(_, let reason) {
            throw DatabaseError.verificationFailed(path: sourcePath, reason: "it is malformed: \(reason)")
        } catch DatabaseError.wrongKeyOrNotADatabase {
            throw DatabaseError.verificationFailed(path: sourcePath, reason: "its key does not open it")
        } catch {
            throw DatabaseError.verificationFailed(path: sourcePath, reason: "it does not open: \(error)")
        }
        defer { copy.close() }
        // quick_check reads every page in use (SQLCipher authenticates each)
        // and checks every b-tree, as integrity_check does, but skips
        // matching each index against its table, which SQLite's own export
        // wrote from the same rows: 4.8 s of integrity_check against 1.0 s
        // on a 320 MB file, most of a migration's time.
        let copied: SourceFacts
        do {
            let integrity = try copy.integrityProblems(quick: true)
            guard integrity.isEmpty else {
                throw DatabaseError.verificationFailed(path: sourcePath, reason: "integrity check: \(integrity.prefix(3).joined(separator: "; "))")
            }
            copied = try SourceFacts(copy)
        } catch DatabaseError.sqlite(_, let message, _) {
            // A page that does not authenticate fails the read itself.
            throw DatabaseError.verificationFailed(path: sourcePath, reason: "reading it back failed: \(message)")
        }
        if copied.schema != facts.schema {
            throw DatabaseError.verificationFailed(path: sourcePath, reason: "the schema differs")
        }
        for (table, count) in facts.rowCounts where copied.rowCounts[table] != count {
            throw DatabaseError.verificationFailed(
                path: sourcePath, reason: "table \(table) has \(copied.rowCounts[table] ?? 0) rows instead of \(count)")
        }
        if copied.userVersion != facts.userVersion || copied.applicationID != facts.applicationID
            || copied.autoVacuum != facts.autoVacuum {
            throw DatabaseError.verificationFailed(path: sourcePath, reason: "user_version, application_id or auto_vacuum differs")
        }
    }
}

/// What the new database must equal: the schema, every table's row count,
/// and the header values `sqlcipher_export` does not copy.
struct SourceFacts: Equatable {
    struct SchemaEntry: Equatable {
        var type: String
        var name: String
        var tableName: String
        var sql: String?
    }

    var schema: [SchemaEntry]
    var rowCounts: [String: Int]
    var userVersion: Int
    var applicationID: Int
    var autoVacuum: Int
    /// Whether the source is in WAL mode (which the new file is given back).
    var isWriteAheadLog: Bool
    /// Bytes of the source's pages that hold data (free pages excluded).
    var usedBytes: Int
    /// Bytes of all its pages: the file's size when nothing follows them.
    var pageBytes: Int

    init(_ db: Database) throws {
        schema = try db.fetchAll("SELECT type, name, tbl_name, sql FROM main.sqlite_master ORDER BY type, name").map {
            SchemaEntry(type: try $0[0], name: try $0[1], tableName: try $0[2], sql: try $0[3])
        }
        rowCounts = Dictionary(uniqueKeysWithValues: try db.tableRowCounts().map { ($0.name, $0.rows) })
        userVersion = try db.fetchScalar(Int.self, "PRAGMA main.user_version") ?? 0
        applicationID = try db.fetchScalar(Int.self, "PRAGMA main.application_id") ?? 0
        autoVacuum = try db.fetchScalar(Int.self, "PRAGMA main.auto_vacuum") ?? 0
        isWriteAheadLog = try db.fetchScalar(String.self, "PRAGMA main.journal_mode")?.lowercased() == "wal"
        let pageSize = try db.connection.integerValue("PRAGMA main.page_size") ?? 0
        let pages = try db.fetchScalar(Int.self, "PRAGMA main.page_count") ?? 0
        let free = try db.fetchScalar(Int.self, "PRAGMA main.freelist_count") ?? 0
        usedBytes = (pages - free) * pageSize
        pageBytes = pages * pageSize
    }
}
