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

    /// Whether `error`, thrown by ``init(path:key:settings:salt:)``, says
    /// that no page opens with the key (or that the file is too short to be a
    /// database), rather than that a salt is missing or wrong.
    static func isWrongKey(_ error: any Error) -> Bool

    /// The settings the file was written with.
    var settings: CipherSettings { get }

    /// The salt its pages were written with (from its first 16 bytes, or as given).
    var salt: [UInt8] { get }

    /// Pages in the file, the last one counted even when the file ends inside it.
    var pageCount: Int { get }

    /// Checks the HMAC of every page of the file and every frame of the log
    /// beside it, and names each damaged one.
    ///
    /// - throws: an error whose category is ``DBCryptErrorCategory/storage``
    ///   for a file that cannot be read, or ``DBCryptErrorCategory/cancelled``.
    func verify(progress: (@Sendable (JobProgress) -> Void)?, cancellation: JobCancellation?) throws -> VerificationReport

    /// Writes a copy at `output` (which must not exist, or be empty) whose
    /// page 1 keeps its first `plaintextHeaderSize` bytes in the clear, or
    /// with 0 the standard layout, salt in front; same key, same salt.
    ///
    /// - returns: the copy's settings.
    /// - throws: an error whose category is ``DBCryptErrorCategory/damaged``
    ///   for pages that do not authenticate; others for a `-wal` with
    ///   frames, and for files that cannot be read or written.
    func convertHeader(to output: String, plaintextHeaderSize: Int, progress: (@Sendable (JobProgress) -> Void)?,
                       cancellation: JobCancellation?) throws -> CipherSettings

    /// Writes the database as a plaintext SQLite file at `output`, which
    /// must not exist or be empty, every page authenticated.
    ///
    /// - throws: an error whose category is ``DBCryptErrorCategory/damaged``
    ///   for pages that do not authenticate; others for files that cannot be read or written.
    func writePlaintext(to output: String, progress: (@Sendable (JobProgress) -> Void)?, cancellation: JobCancellation?) throws

    /// Rebuilds what authenticates of a damaged database in `destination`,
    /// a new empty database: each table with the rows its b-tree still
    /// reaches, rows whose table cannot be told in `lost_and_found`, through
    /// `scratch`, a file of the authentic pages that is removed after.
    ///
    /// - throws: an error whose category is ``DBCryptErrorCategory/exists``
    ///   when `scratch` exists; others for files that cannot be read or
    ///   written, ``DBCryptErrorCategory/cancelled``, and what `destination` throws.
    func salvage(into destination: some SalvageDestination, scratch: String, progress: (@Sendable (JobProgress) -> Void)?,
                 cancellation: JobCancellation?) throws -> SalvageReport
}
