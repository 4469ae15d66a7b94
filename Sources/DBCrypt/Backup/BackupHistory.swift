import Foundation

/// The records of a backup as a restore reads them: every one fetched and
/// authenticated, in order, cut into runs where the chain breaks (a record
/// missing, damaged, or not following the one before), and the plan that
/// rebuilds a commit from a snapshot and the frames after it in one run.
struct BackupHistory {
    struct Plan {
        /// The snapshot's parts, in order.
        var snapshot: [BackupRecord]
        /// The frames records after it, up to the one holding `commit`.
        var frames: [BackupRecord]
        var commit: UInt64
        var time: Date
        /// What keeps a later commit from being restored, for `.latest`.
        var problem: String?
    }

    /// A complete snapshot in a run, and the commits reachable from it.
    private struct Start {
        var parts: [BackupRecord]
        var frames: [BackupRecord]
        var run: Int
        var firstCommit: UInt64 { parts[0].commit }
        var lastCommit: UInt64 { frames.last?.lastCommit ?? firstCommit }
        /// The commits and when each was shipped.
        var commits: [(UInt64, UInt64)] {
            [(firstCommit, parts[0].time)] + frames.flatMap { record in (record.commit...record.lastCommit).map { ($0, record.time) } }
        }
    }

    private let storage: any BackupStorage
    private let authenticator: BackupAuthenticator
    private var records: [BackupRecord] = []
    private var runs: [Int] = []
    /// Where the chain breaks: the run that ends there, and what is wrong.
    private var breaks: [(endingRun: Int, description: String)] = []

    /// Fetches and authenticates every record `catalog` lists.
    ///
    /// - throws: the storage's errors.
    init(_ storage: any BackupStorage, catalog: BackupCatalog, authenticator: BackupAuthenticator) throws {
        self.storage = storage
        self.authenticator = authenticator
        var run = 0
        var previous: BackupRecord?
        for entry in catalog.entries {
            if let last = records.last, entry.number > last.number + 1 {
                let missing = entry.number == last.number + 2 ? "record \(last.number + 1) is missing"
                    : "records \(last.number + 1) to \(entry.number - 1) are missing"
                breaks.append((run, missing))
                run += 1
                previous = nil
            }
            let record: BackupRecord
            do {
                (record, _) = try BackupRecord.open(try storage.get(entry.name), named: entry.name, with: authenticator)
            } catch let problem as BackupRecord.Problem {
                breaks.append((run, "record \(entry.number) (\(entry.name)) is damaged: \(problem)"))
                run += 1
                previous = nil
                continue
            } catch let BackupError.damaged(_, reason) {
                // Not an object at all (a FIFO, a directory): junk, skipped and named, never waited on.
                breaks.append((run, "record \(entry.number) (\(entry.name)) is junk: \(reason)"))
                run += 1
                previous = nil
                continue
            }
            if let previous, !HMACKey.equal(record.previousMAC, previous.mac) {
                breaks.append((run, "record \(record.number) does not follow record \(previous.number): records were reordered or replayed"))
                run += 1
            }
            records.append(record)
            runs.append(run)
            previous = record
        }
    }

    /// The payload of `record`, fetched again and checked to be the record authenticated before.
    ///
    /// - throws: ``BackupError/damaged(location:reason:)`` when it changed meanwhile.
    func payload(of record: BackupRecord) throws -> Data {
        do {
            let (again, payload) = try BackupRecord.open(try storage.get(record.name), named: record.name, with: authenticator)
            guard again.mac == record.mac else { throw BackupRecord.Problem.notAuthentic }
            return payload
        } catch let problem as BackupRecord.Problem {
            throw BackupError.damaged(location: storage.location, reason: "record \(record.number) changed while it was read: \(problem)")
        }
    }

    /// How to rebuild `target`.
    ///
    /// - throws: ``BackupError/noSuchCommit(requested:available:)``, or
    ///   ``BackupError/damaged(location:reason:)`` when no complete snapshot can be read.
    func plan(_ target: ContinuousBackup.RestoreTarget, location: String) throws -> Plan {
        let starts = self.starts()
        guard !starts.isEmpty else {
            throw BackupError.damaged(location: location, reason: "no complete snapshot can be read" + (breaks.isEmpty ? "" : ": " + breaks.map(\.description).joined(separator: "; ")))
        }
        let wanted: UInt64
        switch target {
        case .latest:
            let run = starts.last!.run
            wanted = starts.filter { $0.run == run }.map(\.lastCommit).max()!
        case .commit(let number):
            wanted = number
        case .time(let date):
            let milliseconds = date.timeIntervalSince1970 * 1000
            // Any Date, even one past UInt64's milliseconds or not a number, converts without a trap.
            let limit: UInt64 = !(milliseconds > 0) ? 0 : milliseconds >= 18_446_744_073_709_549_568 ? .max : UInt64(milliseconds)
            guard let found = starts.flatMap(\.commits).filter({ $0.1 <= limit }).map(\.0).max() else {
                // A Date out of any calendar's range traps when printed: it is named without it.
                let seconds = date.timeIntervalSince1970
                let when = seconds.magnitude < 253_402_300_800 ? ISO8601DateFormatter().string(from: date) : "a time out of range (\(seconds) s)"
                throw BackupError.noSuchCommit(requested: "commit shipped by \(when)", available: available(starts))
            }
            wanted = found
        }
        guard let start = starts.filter({ $0.firstCommit <= wanted && wanted <= $0.lastCommit }).max(by: { $0.firstCommit < $1.firstCommit }) else {
            throw BackupError.noSuchCommit(requested: "commit \(wanted)", available: available(starts))
        }
        let frames = start.frames.prefix { $0.commit <= wanted }
        let time = wanted == start.firstCommit ? start.parts[0].time : frames.last!.time
        let later = breaks.filter { $0.endingRun >= start.run }.map(\.description)
        return Plan(snapshot: start.parts, frames: Array(frames), commit: wanted, time: Date(timeIntervalSince1970: Double(time) / 1000),
                    problem: target == .latest && !later.isEmpty ? later.joined(separator: "; ") : nil)
    }

    /// Every complete snapshot, with the frames records after it in its run.
    private func starts() -> [Start] {
        var starts: [Start] = []
        var index = 0
        while index < records.count {
            let record = records[index]
            guard record.kind == .snapshot, record.partIndex == 0 else {
                index += 1
                continue
            }
            var parts = [record]
            var next = index + 1
            while !parts.last!.isLastPart, next < records.count, runs[next] == runs[index], records[next].kind == .snapshot,
                  records[next].partIndex == parts.last!.partIndex + 1, records[next].time == record.time {
                parts.append(records[next])
                next += 1
            }
            if parts.last!.isLastPart {
                var frames: [BackupRecord] = []
                var after = next
                while after < records.count, runs[after] == runs[index], !records[after].startsOver {
                    if records[after].kind == .frames { frames.append(records[after]) }
                    after += 1
                }
                starts.append(Start(parts: parts, frames: frames, run: runs[index]))
            }
            index = next
        }
        return starts
    }

    /// What the backup holds, and what broke its chain: a commit that is
    /// not there may lie past a record missing or damaged, which is named.
    private func available(_ starts: [Start]) -> String {
        Self.describe(starts) + (breaks.isEmpty ? "" : "; " + breaks.map(\.description).joined(separator: "; "))
    }

    private static func describe(_ starts: [Start]) -> String {
        var ranges: [(UInt64, UInt64)] = []
        for start in starts.sorted(by: { $0.firstCommit < $1.firstCommit }) {
            if let last = ranges.last, start.firstCommit <= last.1 + 1 {
                ranges[ranges.count - 1].1 = max(last.1, start.lastCommit)
            } else {
                ranges.append((start.firstCommit, start.lastCommit))
            }
        }
        return ranges.map { $0.0 == $0.1 ? "commit \($0.0)" : "commits \($0.0) to \($0.1)" }.joined(separator: ", ")
    }
}
