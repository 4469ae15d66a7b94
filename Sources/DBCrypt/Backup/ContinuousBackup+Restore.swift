import Foundation

extension ContinuousBackup {
    /// Which commit a restore rebuilds.
    public enum RestoreTarget: Sendable, Equatable {
        /// The last commit the backup holds whole.
        case latest
        /// The commit with this number (``ShippedCommit/commit``).
        case commit(UInt64)
        /// The last commit shipped at or before this time.
        case time(Date)
    }

    /// What a restore rebuilt.
    public struct RestoredCommit: Sendable, Equatable {
        /// The commit's number.
        public let commit: UInt64
        /// When it was shipped.
        public let time: Date
        /// For ``RestoreTarget/latest``: what kept a later commit from being
        /// restored (a record missing or damaged, named), or nil.
        public let problem: String?
        /// The records of another backup found at the destination and
        /// skipped (copied in: another database's under the same key, or a
        /// second backup of this one), named; nil when there were none.
        public let skipped: String?
    }

    /// ``restore(from:key:cipher:to:target:expecting:options:)`` in the first
    /// argument order.
    @available(*, deprecated, renamed: "restore(from:key:cipher:to:target:expecting:options:)")
    @discardableResult
    public static func restore(from storage: any BackupStorage, to path: String, key: DatabaseKey, cipher: CipherSettings = .sqlcipher4,
                               target: RestoreTarget = .latest, expecting receipt: BackupReceipt? = nil,
                               options: ExportOptions = ExportOptions()) throws -> RestoredCommit {
        try restore(from: storage, key: key, cipher: cipher, to: path, target: target, expecting: receipt, options: options)
    }

    /// Rebuilds the database as of `target` from the backup in `storage`
    /// (under `key`), at `path`, in the routines' argument order (source,
    /// key, destination), with the routines' guarantees (written beside `path`, checked,
    /// then renamed into place: killed at any instant, `path` holds what it
    /// held before or the whole restored database).
    ///
    /// Every record used is authenticated (its header's MAC under a key
    /// derived from `key`, its content's hash, its place in the chain of
    /// records), every frame's checksum continues the log's chain, and the
    /// file is checked page by page (each page's HMAC) and by SQLite before it
    /// is put in place. A record missing or damaged ends what can be restored
    /// from the snapshot before it: ``RestoreTarget/latest`` then restores the
    /// last commit before it and names it in ``RestoredCommit/problem``.
    ///
    /// Records of another backup (another database under the same key, or a
    /// second backup of this one) copied into the destination are skipped and
    /// named in ``RestoredCommit/skipped``: the backup is the one its oldest
    /// record belongs to.
    ///
    /// Not detected without `receipt`: a destination rolled back whole to an
    /// older state of the backup (its last records removed, every earlier one
    /// intact) looks like a backup that was stopped then; and a destination
    /// replaced whole by another backup made with the same key is that
    /// backup. A receipt (``ShippedCommit/receipt``, kept by the app apart
    /// from the destination) detects both, back to its commit.
    ///
    /// - parameter key: the database's key; a passphrase is derived with the
    ///   snapshot's salt and `cipher` (then the other standard format).
    /// - parameter receipt: the receipt of a commit shipped, when the app kept one.
    /// - throws: ``BackupError/notAsExpected(location:reason:)`` when the
    ///   backup is not the one `receipt` came from, or ends before its record;
    ///   ``BackupError/noBackup(location:)``, ``BackupError/wrongKey(location:)``,
    ///   ``BackupError/noSuchCommit(requested:available:)``, ``BackupError/damaged(location:reason:)``
    ///   (no commit before the damage either), ``BackupError/storageFailed(location:reason:)``,
    ///   ``BackupError/objectNotFound(location:)`` when records vanish under five listings in a row;
    ///   ``DatabaseError/destinationExists(path:)`` without `options.replaceExisting`,
    ///   ``DatabaseError/diskFull(path:)``, ``DatabaseError/verificationFailed(path:reason:)``,
    ///   ``DatabaseError/cancelled``.
    @discardableResult
    public static func restore(from storage: any BackupStorage, key: DatabaseKey, cipher: CipherSettings = .sqlcipher4, to path: String,
                               target: RestoreTarget = .latest, expecting receipt: BackupReceipt? = nil,
                               options: ExportOptions = ExportOptions()) throws -> RestoredCommit {
        // A record pruned between the listing and its reading (a backup
        // running beside) is no failure: list again, and restore from what is there.
        var attempt = 1
        while true {
            do {
                return try restoreOnce(from: storage, to: path, key: key, cipher: cipher, target: target, receipt: receipt, options: options)
            } catch BackupError.objectNotFound(_) where attempt < 5 {
                attempt += 1
            }
        }
    }

    private static func restoreOnce(from storage: any BackupStorage, to path: String, key: DatabaseKey, cipher: CipherSettings,
                                    target: RestoreTarget, receipt: BackupReceipt?, options: ExportOptions) throws -> RestoredCommit {
        if let directory = storage as? DirectoryBackupStorage, directory.contains(path) {
            throw DatabaseError.cannotOpen(path: path, reason: "it is inside the backup being read, \(directory.path), whose records it could replace: write the database elsewhere")
        }
        let catalog = try BackupCatalog(storage)
        guard !catalog.snapshots.isEmpty else { throw BackupError.noBackup(location: storage.location) }
        let (authenticator, settings) = try authenticate(storage, catalog: catalog, key: key, cipher: cipher)
        let history = try BackupHistory(storage, catalog: catalog, authenticator: authenticator)
        if let receipt { try history.require(receipt, location: storage.location) }
        let plan = try history.plan(target, location: storage.location)

        let pageSize = Int(plan.snapshot.first!.pageSize)
        var restored: UInt64 = 0
        try DatabaseEncryption.replaceFile(at: path, options: options, write: { newFile in
            let fd = open(newFile, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw DatabaseError.cannotOpen(path: newFile, reason: String(cString: strerror(errno))) }
            defer { close(fd) }
            var writer = PageWriter(fd: fd, path: path, pageSize: pageSize)
            for part in plan.snapshot {
                try writer.append(try history.payload(of: part))
            }
            try writer.truncate(pages: plan.snapshot.last!.databasePages)
            restored = plan.snapshot.last!.commit
            var position = LogPosition(plan.snapshot.last!)
            for record in plan.frames {
                if options.cancellation?.isCancelled == true { throw DatabaseError.cancelled }
                try position.requireContinued(by: record, after: restored, location: storage.location)
                let payload = try history.payload(of: record)
                restored = try writer.apply(payload, of: record, position: &position, until: plan.commit, location: storage.location)
                if restored == plan.commit { break }
            }
            guard restored == plan.commit else {
                throw BackupError.damaged(location: storage.location, reason: "commit \(plan.commit) is not in the records that should hold it")
            }
        }, check: { newFile in
            defer { for companion in [CompanionFile.wal, .shm] { unlink(companion.path(of: newFile)) } }
            try checkRestored(newFile, key: key, settings: settings, source: storage.location)
        })
        return RestoredCommit(commit: plan.commit, time: plan.time, problem: plan.problem, skipped: plan.skipped)
    }

    /// The authenticator of the backup: `key` with a snapshot's salt (the
    /// oldest snapshot whose first part authenticates, of the first eight:
    /// the backup is its oldest records', and records copied in later under
    /// another salt do not authenticate), under `cipher`, else the other
    /// standard format; and the settings that worked.
    private static func authenticate(_ storage: any BackupStorage, catalog: BackupCatalog, key: DatabaseKey,
                                     cipher: CipherSettings) throws -> (BackupAuthenticator, CipherSettings) {
        var candidates = [cipher]
        if cipher == .sqlcipher4 || cipher == .sqlcipher3 { candidates.append(CipherSettings(cipher.format.other)) }
        let names = catalog.snapshots.prefix(8).compactMap { snapshot in
            catalog.entries.first(where: { $0.number == snapshot.firstNumber })?.name
        }
        let found = try storage.firstOpened(names) { object, name -> (BackupAuthenticator, CipherSettings)? in
            let salt = cipher.plaintextHeaderSize > 0 ? key.salt ?? cipher.salt ?? [] : [UInt8](object.dropFirst(BackupRecord.headerSize).prefix(16))
            for settings in candidates {
                let authenticator = try BackupAuthenticator(databaseKey: key, salt: salt, settings: settings)
                if (try? BackupRecord.open(object, named: name, with: authenticator)) != nil { return (authenticator, settings) }
            }
            return nil
        }
        if let found { return found }
        throw BackupError.wrongKey(location: storage.location)
    }

    /// Checks the restored file: every page's HMAC, read with the core's page cipher; then SQLite's quick check.
    private static func checkRestored(_ path: String, key: DatabaseKey, settings: CipherSettings, source: String) throws {
        let failing: [UInt32]
        do {
            let cipher = try PageCipher(key: key, salt: settings.fileSalt(path, key: key) ?? [], settings: settings)
            failing = try cipher.unauthenticatedPages(of: FileReader(path: path), limit: 3)
        } catch let error as FileError {
            throw DatabaseError(error)
        }
        guard failing.isEmpty else {
            throw DatabaseError.verificationFailed(
                path: source, reason: "the restored file has pages that do not authenticate: \(failing.map { "page \($0)" }.joined(separator: ", "))")
        }
        try SnapshotBackup.check(path, key: key, cipher: settings, source: source)
    }
}

/// Where the log stands after the records applied so far: its generation,
/// the next frame, and the chain's checksum there.
private struct LogPosition {
    var checkpointSequence: UInt32
    var salts: [UInt8]
    var nextFrame: UInt32
    var seed: (UInt32, UInt32)

    init(_ record: BackupRecord) {
        checkpointSequence = record.checkpointSequence
        salts = record.salts
        nextFrame = record.firstFrame
        seed = record.seed
    }

    /// A frames record continues the log where it stands, or starts the
    /// next run of the log (as SQLite starts it over) at its first frame;
    /// and its first commit is the one after the last applied.
    func requireContinued(by record: BackupRecord, after commit: UInt64, location: String) throws {
        let sameLog = record.checkpointSequence == checkpointSequence && record.salts == salts
        let noLogYet = salts.allSatisfy { $0 == 0 }
        let continues = sameLog ? record.firstFrame == nextFrame && record.seed == seed
            : record.firstFrame == 0 && (noLogYet || WriteAheadLogHeader.follows(
                checkpointSequence: record.checkpointSequence, salts: record.salts, previous: (checkpointSequence, salts)))
        guard continues, record.commit == commit &+ 1 else {
            throw BackupError.damaged(location: location, reason: "record \(record.number) does not continue the log where the record before it left it")
        }
    }
}

/// Writes pages into the restored file.
private struct PageWriter {
    let fd: Int32
    let path: String
    let pageSize: Int
    var offset: Int64 = 0

    mutating func append(_ data: Data) throws {
        try write(data, at: offset)
        offset += Int64(data.count)
    }

    func truncate(pages: UInt32) throws {
        guard ftruncate(fd, off_t(pages) * off_t(pageSize)) == 0 else { throw failure() }
    }

    /// Applies the frames of `record` (its payload) in order, checking each
    /// frame's salts and checksum; returns the last commit applied, stopping
    /// at `target`.
    func apply(_ payload: Data, of record: BackupRecord, position: inout LogPosition, until target: UInt64, location: String) throws -> UInt64 {
        let frameSize = WriteAheadLogFrame.headerSize + pageSize
        guard payload.count == Int(record.frameCount) * frameSize else {
            throw BackupError.damaged(location: location, reason: "record \(record.number) holds \(payload.count) bytes, not \(record.frameCount) frames")
        }
        guard record.commit > 0 else {
            throw BackupError.damaged(location: location, reason: "record \(record.number) numbers its first commit 0, which only a snapshot holds")
        }
        var commit = record.commit
        var applied = record.commit - 1
        var seed = record.seed
        for index in 0..<Int(record.frameCount) {
            let start = payload.startIndex + index * frameSize
            let frame = Data(payload[start..<start + frameSize])
            let (page, commitSize) = try frame.withUnsafeBytes { frame in
                guard let sum = WriteAheadLogFrame.continuing(frame, salts: record.salts, seed: seed, bigEndian: record.bigEndianChecksums) else {
                    throw BackupError.damaged(location: location, reason: "frame \(Int(record.firstFrame) + index) of record \(record.number) fails its checksum")
                }
                seed = sum
                return (WriteAheadLogFrame.pageNumber(frame), WriteAheadLogFrame.commitSize(frame))
            }
            try write(frame.dropFirst(WriteAheadLogFrame.headerSize), at: Int64(page - 1) * Int64(pageSize))
            if commitSize != 0 {
                applied = commit
                if commit == target {
                    try truncate(pages: commitSize)
                    return applied
                }
                commit += 1
            }
        }
        position = LogPosition(checkpointSequence: record.checkpointSequence, salts: record.salts,
                               nextFrame: record.firstFrame + record.frameCount, seed: seed)
        if let last = lastCommitSize(payload, frameSize: frameSize) { try truncate(pages: last) }
        return applied
    }

    private func lastCommitSize(_ payload: Data, frameSize: Int) -> UInt32? {
        guard payload.count >= frameSize else { return nil }
        let size = Data(payload.suffix(frameSize)).withUnsafeBytes { WriteAheadLogFrame.commitSize($0) }
        return size == 0 ? nil : size
    }

    private func write(_ data: Data, at offset: Int64) throws {
        try DatabaseError.translating { () throws(FileError) in
            try data.withUnsafeBytes { bytes in Result { () throws(FileError) in try DurableWrite.writeAll(bytes, to: fd, at: offset, path: path) } }.get()
        }
    }

    private func failure() -> DatabaseError { DatabaseError(FileError(errno: errno, path: path)) }
}

extension LogPosition {
    init(checkpointSequence: UInt32, salts: [UInt8], nextFrame: UInt32, seed: (UInt32, UInt32)) {
        self.checkpointSequence = checkpointSequence
        self.salts = salts
        self.nextFrame = nextFrame
        self.seed = seed
    }
}
