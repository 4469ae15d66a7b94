extension WriteAheadLogDamage {
    /// The damage of the `-wal` beside `databasePath`, or nil when there is
    /// no log or SQLite reads every committed transaction in it.
    ///
    /// - throws: ``SQLCipherFormatError/cannotRead(path:reason:)`` when the log cannot be read.
    public static func find(besideDatabaseAt databasePath: String) throws -> WriteAheadLogDamage? {
        try readingFiles { try search(besideDatabaseAt: databasePath) }
    }
}
