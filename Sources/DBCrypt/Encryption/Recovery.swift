import Foundation

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
            do {
                let db = try Database(path: newFile)
                defer { db.close() }
                report = try file.salvage(into: SalvageConnection(db), scratch: newFile + "-pages",
                                          progress: options.progress, cancellation: options.cancellation)
            }
            try rebuildFullTextIndexes(newFile, &report!)
        }, check: PageReaderFallback.checkPlaintext)
        // replaceFile runs `write`, or throws.
        return report!
    }

    /// Rebuilds each full-text index (FTS3, FTS4, FTS5) of the salvaged
    /// database at `path` from its recovered content, so that the index
    /// matches the rows that are left. The salvage wrote the tables' schema
    /// rows as the file held them, which the connection that wrote them
    /// does not read: a new one does. A table whose module this SQLite
    /// lacks, or that keeps no content (contentless), stays as recovered,
    /// and the report says so.
    private static func rebuildFullTextIndexes(_ path: String, _ report: inout SalvageReport) throws {
        let db = try Database(path: path)
        defer { db.close() }
        let virtualTables = try db.fetchAll("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND rootpage = 0 AND \(SchemaStatement.makesVirtualTableSQL)")
        for table in virtualTables {
            let (name, sql): (String, String) = (try table[0], try table[1])
            // The module's name follows USING, spaced as it was typed.
            guard let using = sql.range(of: #"\sUSING\s+\w+"#, options: [.regularExpression, .caseInsensitive]),
                  ["fts3", "fts4", "fts5"].contains(sql[using].split(whereSeparator: \.isWhitespace).last?.lowercased()) else { continue }
            let quoted = SQLIdentifier.quoted(name)
            do {
                try db.execute("INSERT INTO \(quoted)(\(quoted)) VALUES ('rebuild')")
            } catch let DatabaseError.sqlite(_, message, _) {
                report.notes.append("the full-text index of \(name) is as the file held it, not rebuilt (\(message))")
            }
        }
    }
}
