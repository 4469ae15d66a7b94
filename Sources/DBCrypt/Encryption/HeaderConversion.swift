extension DatabaseEncryption {
    /// Gives the encrypted database at `path` a plaintext header: page 1
    /// keeps its first `plaintextHeaderSize` bytes in the clear (32 for an iOS
    /// app that shares a WAL database with an extension), or with 0 the
    /// standard layout back, salt in front. The key and salt stay the same;
    /// a file with a plaintext header opens with its key and the salt this
    /// returns (SQLCipher's `cipher_plaintext_header_size` and `cipher_salt`).
    ///
    /// The copy is written by ``ExportOptions/pageReader`` (required) beside
    /// `output`, or beside `path` when `output` is nil, every page of it
    /// authenticated, then renamed into place (``ExportOptions/replaceExisting``
    /// and ``ExportOptions/replaceHardLinkedFile`` as for every routine).
    ///
    /// - returns: the file's salt, or nil when it already has that layout
    ///   (nothing was written).
    /// - throws: ``DatabaseError/misuse(reason:)`` without a page reader;
    ///   ``DatabaseError/wrongKeyOrNotADatabase(path:)``; ``DatabaseError/databaseInUse(path:)``
    ///   while another connection has the database open; the page reader's
    ///   errors (a `-wal` with frames, damaged pages, a salt missing or
    ///   wrong); ``DatabaseError/verificationFailed(path:reason:)``; and
    ///   what replacing a file throws.
    public static func convertHeader(_ path: String, key: DatabaseKey, cipher: CipherSettings = .sqlcipher4, plaintextHeaderSize: Int,
                                     to output: String? = nil, options: ExportOptions = ExportOptions()) throws -> [UInt8]? {
        guard let reader = options.pageReader else {
            throw DatabaseError.misuse(reason: "converting a header needs ExportOptions.pageReader (SQLCipherFormat's EncryptedDatabaseFile.self)")
        }
        let file = try PageReaderFallback.open(reader, path, key: key, cipher: cipher)
        guard file.settings.plaintextHeaderSize != plaintextHeaderSize else { return nil }
        // A connection could change the file under the copy, or checkpoint a log into the old one.
        guard SQLiteLocks.holder(of: path) == nil else { throw DatabaseError.databaseInUse(path: path) }
        try replaceFile(at: output ?? path, inPlace: output == nil, source: output == nil ? nil : path, options: options, write: { newFile in
            _ = try file.convertHeader(to: newFile, plaintextHeaderSize: plaintextHeaderSize, progress: options.progress,
                                       cancellation: options.cancellation)
        }, check: { newFile in
            var settings = file.settings
            settings.plaintextHeaderSize = plaintextHeaderSize
            let report = try reader.init(path: newFile, key: key, settings: settings, salt: file.salt).verify(progress: nil, cancellation: nil)
            guard report.isIntact else {
                throw DatabaseError.verificationFailed(path: newFile, reason: "\(report.damageCount) pages do not authenticate")
            }
        })
        return file.salt
    }
}
