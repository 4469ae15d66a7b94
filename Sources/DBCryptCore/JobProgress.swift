import Synchronization

/// The progress of a long job: pages of the new database for the
/// encryption routines and the page reader, entries for a sealed store's key
/// rotation. Every long job reports it through an optional
/// `progress: (@Sendable (JobProgress) -> Void)?` and stops when its
/// ``JobCancellation`` is cancelled.
public struct JobProgress: Sendable, Equatable {
    /// Units done so far.
    public let completed: Int
    /// The units the job will do, estimated before it starts; `completed`
    /// never passes it.
    public let total: Int

    /// A report of `completed` out of `total`.
    public init(completed: Int, total: Int) {
        self.completed = completed
        self.total = total
    }

    /// `completed / total`, from 0 to 1.
    public var fraction: Double { total == 0 ? 1 : Double(completed) / Double(total) }
}

/// A flag that cancels a running job, set from any thread: the job stops as
/// soon as it can, removes what it wrote and throws its library's
/// `cancelled` error, leaving its source untouched.
public final class JobCancellation: Sendable {
    private let flag = Atomic<Bool>(false)

    /// A flag not yet set.
    public init() {}

    /// Asks the job to stop as soon as it can.
    public func cancel() { flag.store(true, ordering: .relaxed) }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { flag.load(ordering: .relaxed) }
}
