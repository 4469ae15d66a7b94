import DBCrypt
import Foundation

/// A progress bar on stderr, drawn only when stderr is a terminal.
final class ProgressBar: @unchecked Sendable {
    // @unchecked: the routines call progress on their own thread, one call at a time.
    private let label: String
    private let pageSize: Int
    private let start = Date()

    private init(label: String, pageSize: Int) {
        self.label = label
        self.pageSize = pageSize
    }

    /// The progress callback for a routine, or nil when stderr is not a
    /// terminal; `pageSize` 0 for work counted in entries.
    static func callback(label: String, pageSize: Int) -> (@Sendable (JobProgress) -> Void)? {
        guard isatty(STDERR_FILENO) == 1 else { return nil }
        let bar = ProgressBar(label: label, pageSize: pageSize)
        return { bar.draw($0) }
    }

    private func draw(_ progress: JobProgress) {
        let width = 30
        let filled = Int(progress.fraction * Double(width))
        let elapsed = max(Date().timeIntervalSince(start), 0.001)
        let rate = Double(progress.completed * pageSize) / elapsed / 1_048_576
        var line = String(format: "\r%@ [%@%@] %3d%%", label,
                          String(repeating: "#", count: filled), String(repeating: " ", count: width - filled),
                          Int(progress.fraction * 100))
        // Entries, not pages, have no size to report.
        if pageSize > 0 { line += String(format: "  %.1f MiB/s", rate) }
        var text = line
        if progress.completed >= progress.total { text += "\n" }
        FileHandle.standardError.write(Data(text.utf8))
    }
}
