/// A reader of SQLCipher files that needs no SQLCipher: SQLCipherFormat's
/// `EncryptedDatabaseFile`. DBCrypt's routines take one to fall back on for
/// a file the linked SQLCipher cannot open (SQLCipher 1 or 2 settings, other
/// hashes on SQLCipher 3.4.1), without linking SQLCipherFormat themselves:
///
/// ```swift
/// var options = ExportOptions()
/// options.pageReader = EncryptedDatabaseFile.self
/// let how = try DatabaseEncryption.decrypt("old.db", key: key, to: "plain.db", options: options)
/// ```
public protocol PageReading: AnyObject {
    /// Opens `path` with `key`, trying `settings`, or the standard ones when
    /// nil; `salt` is the salt of a file with a plaintext header.
    ///
    /// - throws: an error whose category is ``DBCryptErrorCategory/wrongKey``
    ///   when no setting opens the file with this key.
    init(path: String, key: DatabaseKey, settings: CipherSettings?, salt: [UInt8]?) throws

    /// The settings the file was written with.
    var settings: CipherSettings { get }

    /// Writes the database as a plaintext SQLite file at `output`, which
    /// must not exist or be empty, every page authenticated.
    ///
    /// - throws: an error whose category is ``DBCryptErrorCategory/damaged``
    ///   for pages that do not authenticate; others for files that cannot be read or written.
    func writePlaintext(to output: String, progress: (@Sendable (JobProgress) -> Void)?, cancellation: JobCancellation?) throws
}
