/// How an encryption routine runs: whether it may replace an existing
/// destination, where it reports progress, and how to cancel it.
///
/// ```swift
/// var options = ExportOptions()
/// options.progress = { p in print("\(Int(p.fraction * 100))%") }
/// options.cancellation = cancel          // a JobCancellation kept by the UI
/// try DatabaseEncryption.migrateInPlace("app.db", key: key, options: options)
/// ```
public struct ExportOptions: Sendable {
    /// Replace a destination that already exists. Default: false, and the
    /// routine refuses. In-place routines always replace their own file.
    public var replaceExisting = false
    /// Let an in-place routine replace a file that has other names (hard
    /// links): those names keep the old content (plaintext, or the old key).
    /// Default: false, and the routine refuses with ``DatabaseError/hardLinked(path:links:)``.
    public var replaceHardLinkedFile = false
    /// Called with the work done so far, at least every 100 ms while there
    /// is progress to report, and once with `completed == total` at the end.
    /// Called on the routine's thread.
    public var progress: (@Sendable (JobProgress) -> Void)?
    /// Cancels the routine when its ``DBCryptCore/JobCancellation/cancel()`` is called,
    /// from any thread: the routine stops, removes what it wrote and throws
    /// ``DatabaseError/cancelled``, leaving the source untouched.
    public var cancellation: JobCancellation?
    /// How long to wait for another connection to release the source before
    /// failing with ``DatabaseError/databaseInUse(path:)``. Default: 2 seconds.
    public var busyTimeout: Duration = .seconds(2)
    /// A reader that needs no SQLCipher (SQLCipherFormat's
    /// `EncryptedDatabaseFile.self`), for ``DatabaseEncryption/decrypt(_:key:cipher:to:options:)``
    /// to fall back on when the linked SQLCipher cannot open the file. Default: nil, none.
    // A class's metatype holds no state; Swift 6.2 asks that a protocol say so (SendableMetatype), which 6.1 cannot read.
    nonisolated(unsafe) public var pageReader: (any PageReading.Type)?

    /// The defaults: do not replace, no progress, no cancellation.
    public init() {}
}
