import DBCryptCore
import Foundation

extension ContinuousBackup {
    /// How far the backup is behind the database.
    public struct Lag: Sendable, Equatable {
        /// Commits in the log that are not shipped yet; nil when the backup
        /// let go of them (``BackupError/backlogTooLarge(location:bytes:)``)
        /// and waits to take a snapshot.
        public let commits: Int?
        /// At most how long the oldest of them has waited: the time since
        /// the backup last shipped all there was (zero when nothing waits).
        public let seconds: Double
    }

    /// Where the shipping stands in the log.
    struct Position: Sendable {
        var generation: WriteAheadLogHeader?
        var frame = 0
        var seed: (UInt32, UInt32) = (0, 0)
        /// When a round last began that shipped all that was committed then.
        var caughtUp = Date()
        /// Whether the backup let go of an unshipped backlog.
        var lettingGo = false
    }

    /// How far behind the backup is now: the commits in the log it has not
    /// shipped (the log read from where the shipping stands, on the
    /// caller's thread) and how long they have waited at most. While the
    /// destination cannot be written, both grow.
    ///
    /// ```swift
    /// if let lag = try pool.continuousBackup?.lag(), lag.seconds > 60 { alert("backup behind by \(lag.commits ?? 0) commits") }
    /// ```
    ///
    /// - throws: ``DatabaseError`` when the log cannot be read.
    public func lag() throws -> Lag {
        let position = shipping.withLock { $0 }
        let since = max(0, Date().timeIntervalSince(position.caughtUp))
        if position.lettingGo { return Lag(commits: nil, seconds: since) }
        let wal = CompanionFile.wal.path(of: path)
        let commits = try DatabaseError.translating { () throws(FileError) -> Int in
            guard let current = try CommittedFrames.generation(of: wal) else { return 0 }
            // The log started over since: every commit in it is new.
            var (frame, seed) = current == position.generation ? (position.frame, position.seed) : (0, current.checksum)
            var count = 0
            while true {
                let frames = try CommittedFrames.read(wal, generation: current, from: frame, seed: seed, limit: 4096)
                guard !frames.commits.isEmpty else { return count }
                count += frames.commits.count
                frame += frames.frameCount
                seed = frames.end
            }
        }
        return Lag(commits: commits, seconds: commits == 0 ? 0 : since)
    }
}
