import Dispatch

/// Turns SQLite's progress handler into ``DBCryptCore/JobProgress`` reports and
/// cancellation.
///
/// `sqlcipher_export` is one opaque call, so progress is read from the file
/// it writes: the new database's size in pages (one `stat` per handler call,
/// a few thousand calls for 100k rows), against a total estimated from the
/// source's used pages. The sibling is written with a small page cache and no
/// journal, so its size grows steadily as the export goes. A report goes out
/// for every 1% of growth, or after 100 ms with any growth. Reports only
/// grow, and stay below the total until ``finish()``.
final class ProgressReporter {
    private let path: String
    private let callback: (@Sendable (JobProgress) -> Void)?
    private let cancellation: JobCancellation?
    private var pageSize = 0
    private var total = 1
    private var lastCompleted = -1
    private var lastReportTime: UInt64 = 0

    init(path: String, callback: (@Sendable (JobProgress) -> Void)?, cancellation: JobCancellation?) {
        self.path = path
        self.callback = callback
        self.cancellation = cancellation
    }

    /// Sets the new database's page size and estimated page count, and reports 0.
    func start(pageSize: Int, total: Int) {
        self.pageSize = pageSize
        self.total = max(1, total)
        report(0)
    }

    /// Called by SQLite every few thousand virtual-machine steps; true asks
    /// SQLite to interrupt the export.
    func tick() -> Bool {
        if cancellation?.isCancelled == true { return true }
        guard callback != nil, pageSize > 0 else { return false }
        let completed = min(Int(SiblingFile.size(of: path)) / pageSize, total - 1)
        guard completed > lastCompleted else { return false }
        if completed - lastCompleted >= max(1, total / 100)
            || DispatchTime.now().uptimeNanoseconds - lastReportTime >= 100_000_000 {
            report(completed)
        }
        return false
    }

    /// Reports the total: the work is done.
    func finish() {
        report(total)
    }

    private func report(_ completed: Int) {
        guard completed > lastCompleted, let callback else { return }
        lastCompleted = completed
        lastReportTime = DispatchTime.now().uptimeNanoseconds
        callback(JobProgress(completed: completed, total: total))
    }
}
