import CSQLCipher
/// The encryption routines: encrypt a plaintext database, export an
/// encrypted one to plaintext, migrate a plaintext file in place, change a
/// key, and the app-launch upgrade that ties them together.
///
/// ```swift
/// // On launch of the version that introduces encryption:
/// let db = try DatabaseEncryption.openOrUpgrade("app.db", key: key) { progress in
///     showProgress(progress.fraction)
/// }
/// ```
///
/// Every routine writes the new database to a sibling file, checks it, and
/// renames it over the destination: killed at any instant, the destination
/// holds either what it held before or the complete new database, and the
/// source is never modified. The path named is the file meant: in-place
/// routines work on a symbolic link's target and keep its owner, group and
/// mode; a file with other hard links is refused unless
/// ``ExportOptions/replaceHardLinkedFile`` says otherwise; an output that is
/// the input, by any name, is refused; a source this process may only read
/// is read under a shared lock. Keys go to SQLCipher through `sqlite3_key_v2`
/// and bound `ATTACH ... KEY ?` parameters, never through SQL text.
/// Temporaries left by an interrupted run are removed by the next one.
///
/// Every routine names the source, its key and its settings, then the
/// destination, its key and its settings. `cipher:` is always the settings
/// of the file that the call's `key:` (or `from:`) opens or writes;
/// `newCipher:` the settings a re-keyed file gets.
public enum DatabaseEncryption {
    /// Writes an encrypted copy of the plaintext database at `source` to `destination`.
    ///
    /// - parameter cipher: the new database's cipher settings (default:
    ///   SQLCipher 4's); a file in a standard format opens later with just its key
    ///   (one with a plaintext header, with its key and salt).
    /// - throws: ``DatabaseError/fileNotFound(path:)`` when `source` is missing,
    ///   ``DatabaseError/sourceNotPlaintext(path:)``, ``DatabaseError/destinationExists(path:)``,
    ///   ``DatabaseError/destinationIsSource(path:)``, ``DatabaseError/uncheckpointedReadOnlySource(path:)``,
    ///   ``DatabaseError/unfinishedTransaction(path:)`` (a source this process may only read),
    ///   ``DatabaseError/damaged(path:reason:)`` (a source SQLite finds malformed),
    ///   ``DatabaseError/fileSizeLimit(path:)``,
    ///   ``DatabaseError/isDirectory(path:)``, ``DatabaseError/permissionDenied(path:)``,
    ///   ``DatabaseError/databaseInUse(path:)``, ``DatabaseError/insufficientSpace(path:needed:available:)``,
    ///   ``DatabaseError/diskFull(path:)``, ``DatabaseError/cancelled``,
    ///   ``DatabaseError/verificationFailed(path:reason:)``.
    public static func encrypt(
        _ source: String, to destination: String, key: DatabaseKey,
        cipher: CipherSettings = .sqlcipher4, options: ExportOptions = ExportOptions()
    ) throws {
        try encrypt(source, to: destination, key: key, cipher: cipher, options: options, inPlace: false)
    }

    /// Writes a plaintext copy of the encrypted database at `source` to
    /// `destination`. With ``ExportOptions/pageReader``, a file the linked
    /// SQLCipher cannot open (SQLCipher 1 or 2 settings, other hashes, a
    /// plaintext header on 3.4.1) is decrypted by that reader instead, every
    /// page authenticated, with the routines' guarantees; a wrong key is
    /// still the linked SQLCipher's error.
    ///
    /// - parameter cipher: the settings `source` was created with; the other
    ///   standard format is tried when these do not open it.
    /// - returns: which reader decrypted it.
    /// - throws: ``DatabaseError/wrongKeyOrNotADatabase(path:)``, ``DatabaseError/notEncrypted(path:)``,
    ///   the page reader's errors, and the errors of ``encrypt(_:to:key:cipher:options:)``.
    @discardableResult
    public static func decrypt(
        _ source: String, key: DatabaseKey, cipher: CipherSettings = .sqlcipher4,
        to destination: String, options: ExportOptions = ExportOptions()
    ) throws -> DecryptionReader {
        let onlyThePageReader = try PageReaderFallback.isNeeded(source, cipher: cipher, pageReader: options.pageReader)
        var linkedError: DatabaseError?
        if !onlyThePageReader {
            do {
                try requireEncrypted(source)
                try Export(
                    sourcePath: source, sourceKey: key, sourceCipher: cipher,
                    destinationPath: destination, destinationKey: nil, destinationCipher: .sqlcipher4, options: options, inPlace: false
                ).run()
                return .linkedSQLCipher
            } catch let error as DatabaseError where options.pageReader != nil && PageReaderFallback.isFor(error) {
                linkedError = error.resultCode == SQLITE_NOTADB ? error : nil
            } catch let error as CipherError where options.pageReader != nil && PageReaderFallback.isFor(error) {}
        }
        guard let pageReader = options.pageReader else { throw DatabaseError.notEncrypted(path: source) }
        let file = try PageReaderFallback.open(pageReader, source, key: key, cipher: cipher, linkedError: linkedError)
        try replaceFile(at: destination, source: source, options: options, write: { newFile in
            try file.writePlaintext(to: newFile, progress: options.progress, cancellation: options.cancellation)
        }, check: PageReaderFallback.checkPlaintext)
        return .pageReader(file.settings)
    }

    /// Which reader a decryption read the encrypted file with.
    public enum DecryptionReader: Sendable, Equatable {
        /// The linked SQLCipher, through `sqlcipher_export`.
        case linkedSQLCipher
        /// ``ExportOptions/pageReader``, for settings the linked SQLCipher cannot open (these).
        case pageReader(CipherSettings)
    }

    /// Encrypts the plaintext database at `path` in place, atomically; through
    /// a symbolic link, its target, whose owner, group and mode it keeps.
    ///
    /// - throws: ``DatabaseError/hardLinked(path:links:)``, ``DatabaseError/ownershipNotKept(path:)``,
    ///   ``DatabaseError/permissionDenied(path:)`` when the file may not be
    ///   written, and the errors of ``encrypt(_:to:key:cipher:options:)``.
    public static func migrateInPlace(
        _ path: String, key: DatabaseKey, cipher: CipherSettings = .sqlcipher4,
        options: ExportOptions = ExportOptions()
    ) throws {
        try encrypt(path, to: path, key: key, cipher: cipher, options: options, inPlace: true)
    }

    /// The export behind ``encrypt(_:to:key:cipher:options:)`` and
    /// ``migrateInPlace(_:key:cipher:options:)``.
    private static func encrypt(
        _ source: String, to destination: String, key: DatabaseKey, cipher: CipherSettings, options: ExportOptions,
        inPlace: Bool
    ) throws {
        try requirePlaintext(source)
        try requireKey(key)
        try Export(
            sourcePath: source, sourceKey: nil, sourceCipher: .sqlcipher4,
            destinationPath: destination, destinationKey: key, destinationCipher: cipher, options: options, inPlace: inPlace
        ).run()
    }

    /// Re-encrypts the database at `path` with a new key (and, optionally, new
    /// cipher settings) in place, atomically, through a full export rather
    /// than `sqlite3_rekey`.
    ///
    /// - parameter cipher: the current settings, tried first (then the other standard format).
    /// - parameter newCipher: the new settings; nil keeps the file's current
    ///   settings. `.sqlcipher4` converts a SQLCipher 3 file, and back.
    /// - throws: ``DatabaseError/wrongKeyOrNotADatabase(path:)`` when `key`
    ///   does not open it, and the errors of ``encrypt(_:to:key:cipher:options:)``.
    public static func changeKey(
        _ path: String, from key: DatabaseKey, cipher: CipherSettings = .sqlcipher4,
        to newKey: DatabaseKey, newCipher: CipherSettings? = nil, options: ExportOptions = ExportOptions()
    ) throws {
        try requireEncrypted(path)
        try requireKey(newKey)
        try Export(
            sourcePath: path, sourceKey: key, sourceCipher: cipher,
            destinationPath: path, destinationKey: newKey, destinationCipher: newCipher, options: options, inPlace: true
        ).run()
    }

    /// Opens the database at `path` with `key`, first migrating it in place
    /// when it is still a plaintext SQLite file: the one call for an app's
    /// launch path. A missing or empty file becomes a new encrypted database.
    ///
    /// - parameter progress: called while a plaintext file is migrated.
    /// - throws: the errors of ``migrateInPlace(_:key:cipher:options:)`` and
    ///   of ``Database/init(path:key:options:)``.
    public static func openOrUpgrade(
        _ path: String, key: DatabaseKey, options: Database.Options = Database.Options(),
        progress: (@Sendable (JobProgress) -> Void)? = nil
    ) throws -> Database {
        try upgradeIfNeeded(path, key: key, cipher: options.cipher, progress: progress)
        return try Database(path: path, key: key, options: options)
    }

    /// Migrates the database at `path` in place when it is a plaintext SQLite
    /// file, and removes temporaries an interrupted run left beside it.
    /// Returns whether it migrated. Use it before opening a ``DatabaseQueue``.
    ///
    /// - throws: the errors of ``migrateInPlace(_:key:cipher:options:)``.
    @discardableResult
    public static func upgradeIfNeeded(
        _ path: String, key: DatabaseKey, cipher: CipherSettings = .sqlcipher4,
        progress: (@Sendable (JobProgress) -> Void)? = nil
    ) throws -> Bool {
        guard case .plaintext = try FileFormat.detect(at: path) else {
            SiblingFile.removeAbandoned(beside: path)   // a migration does this itself
            return false
        }
        var options = ExportOptions()
        options.progress = progress
        try migrateInPlace(path, key: key, cipher: cipher, options: options)
        return true
    }

    // MARK: - Checks before any work

    private static func requirePlaintext(_ path: String) throws {
        switch try FileFormat.detect(at: path) {
        case .plaintext: return
        case .missing: throw DatabaseError.fileNotFound(path: path)
        case .empty, .notPlaintext: throw DatabaseError.sourceNotPlaintext(path: path)
        }
    }

    private static func requireEncrypted(_ path: String) throws {
        switch try FileFormat.detect(at: path) {
        case .notPlaintext: return
        case .missing: throw DatabaseError.fileNotFound(path: path)
        case .plaintext: throw DatabaseError.notEncrypted(path: path)
        case .empty: throw DatabaseError.wrongKeyOrNotADatabase(path: path)
        }
    }

    private static func requireKey(_ key: DatabaseKey) throws {
        guard !key.isEmpty else {
            throw CipherError.invalidKey(reason: "it is empty, which SQLCipher would take as no encryption at all")
        }
    }
}
