extension DatabasePool {
    /// Writes a copy of the database, as it is at one commit, to `destination`,
    /// while reads and writes go on.
    ///
    /// ```swift
    /// try pool.backup(to: "/mnt/backup/notes.db")
    /// try pool.backup(to: "/mnt/backup/notes-v3.db", key: .using(backupKey), cipher: .sqlcipher3)
    /// ```
    ///
    /// The copy is read from one WAL snapshot on a connection of its own,
    /// opened as the readers are (no key derivation). Writers do not wait
    /// for it: while it reads, commits do not restart the WAL, which grows
    /// by what they write and starts over after. A key change or ``close()``
    /// waits for it, as for a read.
    ///
    /// The copy is written beside `destination`, flushed, read back and
    /// checked, then renamed into place: killed at any instant, `destination`
    /// holds what it held before or the complete copy. `options` brings
    /// progress (whose callback must not call this pool), cancellation,
    /// and replacing an existing file.
    ///
    /// - parameter key: the copy's key: the database's own (the default),
    ///   another one, or ``BackupEncryption/plaintext`` when a plaintext copy is meant.
    /// - parameter cipher: the copy's settings, with ``BackupEncryption/using(_:)``;
    ///   nil keeps the database's.
    /// - throws: the errors of ``DatabaseQueue/backup(to:key:cipher:options:)``.
    public func backup(to destination: String, key: BackupEncryption = .sameAsDatabase, cipher: CipherSettings? = nil,
                       options: ExportOptions = ExportOptions()) throws {
        guard !HeldQueues.contains(self) else { throw DatabaseError.reentrantQueueAccess }
        try withSnapshotOpening { snapshot in
            try snapshot.write(to: destination, key: key, cipher: cipher, options: options)
        }
    }
}
