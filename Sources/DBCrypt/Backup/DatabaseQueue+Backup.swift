extension DatabaseQueue {
    /// Writes a copy of the database, as it is at one commit, to `destination`,
    /// while the app goes on using the queue.
    ///
    /// ```swift
    /// try queue.backup(to: "/mnt/backup/notes.db")
    /// ```
    ///
    /// In WAL mode the copy is read from a snapshot on a connection of its
    /// own, and the queue's work, and other connections' writes, go on
    /// meanwhile. With a rollback journal (SQLite's default) the queue waits
    /// for the copy, and so does every other connection's commit, in this
    /// process or another (up to its busy timeout): a shared lock is what
    /// keeps the copy to one state.
    ///
    /// The copy is written beside `destination`, flushed, read back and
    /// checked, then renamed into place: killed at any instant, `destination`
    /// holds what it held before or the complete copy. `options` brings
    /// progress (whose callback must not call this queue), cancellation,
    /// and replacing an existing file.
    ///
    /// - parameter key: the copy's key: the database's own (the default),
    ///   another one, or ``BackupEncryption/plaintext`` when a plaintext copy is meant.
    /// - parameter cipher: the copy's settings, with ``BackupEncryption/using(_:)``;
    ///   nil keeps the database's.
    /// - throws: ``DatabaseError/misuse(reason:)`` for `cipher` with another
    ///   `key`, or for an in-memory database; ``DatabaseError/reentrantQueueAccess``,
    ///   ``DatabaseError/connectionClosed``; ``DatabaseError/destinationExists(path:)``,
    ///   ``DatabaseError/destinationIsSource(path:)``, ``DatabaseError/permissionDenied(path:)``,
    ///   ``DatabaseError/insufficientSpace(path:needed:available:)``, ``DatabaseError/diskFull(path:)``,
    ///   ``DatabaseError/fileSizeLimit(path:)``, ``DatabaseError/cancelled``,
    ///   ``DatabaseError/databaseInUse(path:)`` (another process keeps it locked past
    ///   `options.busyTimeout`), ``DatabaseError/damaged(path:reason:)``,
    ///   ``DatabaseError/verificationFailed(path:reason:)``.
    public func backup(to destination: String, key: BackupEncryption = .sameAsDatabase, cipher: CipherSettings? = nil,
                       options: ExportOptions = ExportOptions()) throws {
        let walSnapshot: SnapshotBackup? = try inDatabase { db in
            let snapshot = SnapshotBackup(of: db)
            if try db.fetchScalar(String.self, "PRAGMA main.journal_mode")?.lowercased() == "wal" { return snapshot }
            // Rollback journal: the queue is held until the copy is written.
            try snapshot.write(to: destination, key: key, cipher: cipher, options: options)
            return nil
        }
        guard let walSnapshot else { return }
        try HeldQueues.holding(self, as: .read) {
            try walSnapshot.write(to: destination, key: key, cipher: cipher, options: options)
        }
    }
}
