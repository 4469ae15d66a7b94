extension DatabaseEncryption {
    /// Salvages what authenticates of the damaged encrypted database at
    /// `path` into a new plaintext database at `output`, read page by page
    /// by `reader` (SQLCipherFormat's `EncryptedDatabaseFile`), since the
    /// linked SQLCipher refuses a damaged file: each table rebuilt with its
    /// own CREATE statement and the rows its b-tree still reaches, rowids
    /// kept, rows whose table cannot be told in `lost_and_found`. The result
    /// is written beside `output`, checked by SQLite's integrity check, then
    /// renamed into place with mode 0600; `path` is not changed. Of
    /// `options`, the replacement, progress and cancellation are read
    /// (``ExportOptions/pageReader`` is not: `reader` is the one used).
    ///
    /// - returns: each table and its rows, and which pages were lost.
    /// - throws: ``DatabaseError/wrongKeyOrNotADatabase(path:)`` when no page
    ///   opens with the key, ``DatabaseError/destinationExists(path:)``
    ///   (unless ``ExportOptions/replaceExisting``),
    ///   ``DatabaseError/verificationFailed(path:reason:)``, and the reader's
    ///   errors: a salt missing or wrong, a file that cannot be read or
    ///   written, cancelled through ``ExportOptions/cancellation``.
    public static func recover(_ path: String, key: DatabaseKey, cipher: CipherSettings = .sqlcipher4, to output: String,
                               reader: any PageReading.Type, options: ExportOptions = ExportOptions()) throws -> SalvageReport {
        let file = try PageReaderFallback.open(reader, path, key: key, cipher: cipher)
        var report: SalvageReport?
        try replaceFile(at: output, source: path, options: options, write: { newFile in
            let db = try Database(path: newFile)
            defer { db.close() }
            report = try file.salvage(into: SalvageConnection(db), scratch: newFile + "-pages",
                                      progress: options.progress, cancellation: options.cancellation)
        }, check: PageReaderFallback.checkPlaintext)
        // replaceFile runs `write`, or throws.
        return report!
    }
}
