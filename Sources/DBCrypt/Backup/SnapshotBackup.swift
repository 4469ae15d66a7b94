import CSQLCipher
import Foundation

/// A backup of an open database: one committed state of it, written to
/// another file with the routines' guarantees (a sibling file, flushed,
/// read back and checked, then renamed; progress, cancellation, the
/// free-space check; killed at any instant, the destination holds what it
/// held before or the complete copy).
///
/// The snapshot is read on a connection of its own, opened as the app's
/// connections are (the key derived once, the same settings and locking),
/// in one read transaction: in WAL mode a read snapshot, which writers do
/// not wait for; in rollback-journal mode a shared lock, which keeps every
/// writer's commit waiting until the copy is written.
///
/// With the database's own key, the copy is its pages as they are
/// (``DatabaseImage``): nothing is decrypted or encrypted again, and the
/// read-back check (SQLite's `quick_check` on the copy, which reads and
/// authenticates every page) is the only pass over them with the key. With
/// another key, or none, it is an export (``Export``).
struct SnapshotBackup {
    /// The database's path.
    var path: String
    /// What opens another connection to it: the key derived once (nil for a
    /// plaintext database), the settings that opened it, and the options.
    var openingKey: DatabaseKey?
    var openingCipher: CipherSettings?
    var openingOptions: Database.Options

    /// What opens another connection as `db` was opened.
    init(of db: Database) {
        self.init(path: db.path, openingKey: db.keyForOtherConnections, openingCipher: db.cipher, openingOptions: db.openingOptions)
    }

    init(path: String, openingKey: DatabaseKey?, openingCipher: CipherSettings?, openingOptions: Database.Options) {
        self.path = path
        self.openingKey = openingKey
        self.openingCipher = openingCipher
        self.openingOptions = openingOptions
    }

    /// Writes the copy to `destination`.
    ///
    /// - throws: ``DatabaseError/misuse(reason:)`` for `cipher` without a key
    ///   of its own, and the errors of ``DatabaseEncryption/decrypt(_:key:cipher:to:options:)``.
    func write(to destination: String, key: BackupEncryption, cipher: CipherSettings?, options: ExportOptions) throws {
        guard path != ":memory:" && !path.isEmpty else {
            throw DatabaseError.misuse(reason: "an in-memory database has no file to back up: attach a file and use sqlcipher_export")
        }
        let destinationKey: DatabaseKey?
        var destinationCipher = cipher
        switch key {
        case .sameAsDatabase:
            guard cipher == nil else {
                throw DatabaseError.misuse(reason: "a copy with the database's key keeps its settings: to change them, pass key: .using(key)")
            }
            destinationKey = openingKey
        case .using(let newKey):
            guard !newKey.isEmpty else {
                throw CipherError.invalidKey(reason: "it is empty, which SQLCipher would take as no encryption at all")
            }
            destinationKey = newKey
        case .plaintext:
            guard cipher == nil else { throw DatabaseError.misuse(reason: "a plaintext copy has no cipher settings") }
            destinationKey = nil
            destinationCipher = .sqlcipher4  // unused: only a key makes the export apply settings
        }
        if case .sameAsDatabase = key, let openingKey, let openingCipher {
            return try copyPages(to: destination, key: openingKey, cipher: openingCipher, options: options)
        }
        var sourceOptions = openingOptions
        // The snapshot's connection attaches the copy, so it is not read-only
        // (a read-only main database would make the attached copy read-only
        // too); it writes nothing to the database.
        sourceOptions.readOnly = false
        sourceOptions.queryOnly = false
        sourceOptions.journalMode = .default
        sourceOptions.tryOtherFormat = false
        sourceOptions.trace = nil
        sourceOptions.pollsWhileBusy = true
        var export = Export(
            sourcePath: path, sourceKey: openingKey, sourceCipher: openingCipher ?? .sqlcipher4,
            destinationPath: destination, destinationKey: destinationKey,
            destinationCipher: destinationCipher, options: options, inPlace: false)
        export.sourceOptions = sourceOptions
        try export.run()
    }

    /// Writes the database's pages as they are to `destination`, read under
    /// one read transaction, then checks the copy with the key.
    private func copyPages(to destination: String, key: DatabaseKey, cipher: CipherSettings, options: ExportOptions) throws {
        var readerOptions = Self.holdingRead(openingOptions)
        readerOptions.tryOtherFormat = false
        readerOptions.cipher = cipher
        readerOptions.busyTimeout = options.busyTimeout
        let reader: Database
        do {
            reader = try Database(path: path, key: key, options: readerOptions)
        } catch let error as DatabaseError where error.resultCode == SQLITE_BUSY {
            throw DatabaseError.databaseInUse(path: path)
        }
        defer { reader.closeWithoutCheckpoint() }
        try reader.connection.run("BEGIN DEFERRED")
        defer { try? reader.connection.run("COMMIT") }
        _ = try reader.fetchScalar(Int.self, "SELECT count(*) FROM main.sqlite_master")
        let generation = try DatabaseError.translating { () throws(FileError) in try CommittedFrames.generation(of: CompanionFile.wal.path(of: path)) }
        guard let image = try DatabaseImage(path: path, pageSize: generation?.pageSize ?? cipher.effectivePageSize, generation: generation)
              ?? DatabaseImage(path: path, pageSize: cipher.effectivePageSize, generation: nil) else {
            throw DatabaseError.cannotOpen(path: path, reason: "its pages cannot be read")
        }
        let bytes = Int64(image.pages) * Int64(image.pageSize)
        try DatabaseEncryption.replaceFile(at: destination, source: path, options: options, write: { newFile in
            if let available = SiblingFile.availableBytes(near: newFile), available < bytes + bytes / 5 {
                throw DatabaseError.insufficientSpace(path: destination, needed: bytes + bytes / 5, available: available)
            }
            try Self.write(image, to: newFile, destination: destination, options: options)
        }, check: { newFile in
            // The copy says WAL mode when the database does: the check's
            // connection makes a log and its index, removed after it.
            defer { for companion in [CompanionFile.wal, .shm] { unlink(companion.path(of: newFile)) } }
            try Self.check(newFile, key: key, cipher: cipher, source: path)
        })
    }

    /// Options for a connection that holds a read transaction so that no
    /// checkpoint passes it, opened as the app's connections are: not
    /// read-only (a read-only connection to a WAL database cannot always
    /// read, and may not share a lock exclusive to this process), but
    /// refusing writes; never creating the file, nor changing its journal mode.
    static func holdingRead(_ opening: Database.Options) -> Database.Options {
        var options = opening.forAnotherReader
        // In rollback-journal mode, the read must land between two commits of a writer that never pauses.
        options.pollsWhileBusy = true
        return options
    }

    /// Writes `image` into the empty file at `path`, 4 MiB at a time, reporting progress and checking for cancellation.
    private static func write(_ image: DatabaseImage, to path: String, destination: String, options: ExportOptions) throws {
        let file = try DatabaseError.translating(naming: destination) { () throws(FileError) in try FileWriter(creating: path) }
        let chunk = UInt32(max(1, (4 << 20) / image.pageSize))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(chunk) * image.pageSize, alignment: 16)
        defer { buffer.deallocate() }
        let total = max(1, Int(image.pages))
        options.progress?(JobProgress(completed: 0, total: total))
        var first: UInt32 = 1
        while first <= image.pages {
            if options.cancellation?.isCancelled == true { throw DatabaseError.cancelled }
            let last = min(image.pages, first + chunk - 1)
            let part = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<Int(last - first + 1) * image.pageSize])
            try image.read(first, through: last, into: part)
            try DatabaseError.translating(naming: destination) { () throws(FileError) in try file.write(UnsafeRawBufferPointer(part)) }
            first = last + 1
            if first <= image.pages { options.progress?(JobProgress(completed: Int(first - 1), total: total)) }
        }
        options.progress?(JobProgress(completed: total, total: total))
    }

    /// Opens the copy at `path` with `key` and runs SQLite's `quick_check`,
    /// which reads (so decrypts and authenticates) every page in use.
    ///
    /// - throws: ``DatabaseError/verificationFailed(path:reason:)`` naming `source`.
    static func check(_ path: String, key: DatabaseKey, cipher: CipherSettings, source: String) throws {
        var options = Database.Options()
        options.cipher = cipher
        options.create = false
        options.tryOtherFormat = false
        let db: Database
        do {
            db = try Database(path: path, key: key, options: options)
        } catch {
            throw DatabaseError.verificationFailed(path: source, reason: "the copy does not open: \(error)")
        }
        defer { db.close() }
        let problems: [String]
        do {
            problems = try db.integrityProblems(quick: true)
        } catch {
            throw DatabaseError.verificationFailed(path: source, reason: "reading the copy back failed: \(error)")
        }
        guard problems.isEmpty else {
            throw DatabaseError.verificationFailed(path: source, reason: "the copy fails SQLite's check: \(problems.prefix(3).joined(separator: "; "))")
        }
    }
}
