import Synchronization

/// How an encryption routine runs: whether it may replace an existing
/// destination, where it reports progress, and how to cancel it.
///
/// ```swift
/// var options = ExportOptions()
/// options.progress = { p in print("\(Int(p.fraction * 100))%") }
/// options.cancellation = cancel          // an ExportCancellation kept by the UI
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
    public var progress: (@Sendable (ExportProgress) -> Void)?
    /// Cancels the routine when its ``ExportCancellation/cancel()`` is called,
    /// from any thread: the routine stops, removes what it wrote and throws
    /// ``DatabaseError/cancelled``, leaving the source untouched.
    public var cancellation: ExportCancellation?
    /// How long, in seconds, to wait for another connection to release the
    /// source before failing with ``DatabaseError/databaseInUse(path:)``. Default: 2.
    public var busyTimeout: Double = 2

    /// The defaults: do not replace, no progress, no cancellation.
    public init() {}
}

/// The progress of a long routine: pages of the new database for the
/// encryption routines, entries for a sealed store's key rotation.
public struct ExportProgress: Sendable, Equatable {
    /// Pages of the new database written so far (entries re-sealed so far).
    public let completed: Int
    /// The pages the new database will have, estimated from the source
    /// before the work starts (the entries to re-seal); `completed` never passes it.
    public let total: Int

    /// A report of `completed` out of `total`.
    public init(completed: Int, total: Int) {
        self.completed = completed
        self.total = total
    }

    /// `completed / total`, from 0 to 1.
    public var fraction: Double { total == 0 ? 1 : Double(completed) / Double(total) }
}

/// A flag that cancels a running routine, set from any thread.
public final class ExportCancellation: Sendable {
    private let flag = Atomic<Bool>(false)

    /// A flag not yet set.
    public init() {}

    /// Asks the routine to stop as soon as it can.
    public func cancel() { flag.store(true, ordering: .relaxed) }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { flag.load(ordering: .relaxed) }
}
