import Foundation

/// The records of a backup as a restore reads them: every one fetched and
/// authenticated, in order, cut into runs where the chain breaks (a record
/// missing, damaged, or not following the one before), and the plan that
/// rebuilds a commit from a snapshot and the frames after it in one run.
///
/// The backup is the one its oldest authenticated record belongs to:
/// records of another backup (another database under the same key, or a
/// second backup of this one, copied in) are skipped and named, never
/// chained in.
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
        /// The records of another backup that were skipped.
        var skipped: String?
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
    /// The numbers of the records of another backup, skipped.
    private var foreign: [UInt64] = []
    /// The backup's identity: its oldest authenticated record's.
    private var owner: BackupIdentity?

    /// Fetches and authenticates every record `catalog` lists.
    ///
    /// - throws: the storage's errors.
    init(_ storage: any BackupStorage, catalog: BackupCatalog, authenticator: BackupAuthenticator) throws {
        self.storage = storage
        self.authenticator = authenticator
        var run = 0
        var previous: BackupRecord?
        var lastNumber: UInt64?
        for entry in catalog.entries {
            if let last = lastNumber, entry.number > last + 1 {
                let missing = entry.number == last + 2 ? "record \(last + 1) is missing" : "records \(last + 1) to \(entry.number - 1) are missing"
                breaks.append((run, missing))
                run += 1
                previous = nil
            }
            lastNumber = entry.number
            // Of the objects of one number (the latest first), this backup's.
            var record: BackupRecord?
            var problem: String?
            var isForeign = false
            for candidate in [entry] + catalog.superseded.filter({ $0.number == entry.number }).reversed() {
                do {
                    let (opened, _) = try BackupRecord.open(try storage.get(candidate.name), named: candidate.name, with: authenticator)
                    if let owner, opened.backup != owner {
                        isForeign = true
                        continue
                    }
                    owner = opened.backup
                    record = opened
                    break
                } catch let found as BackupRecord.Problem {
                    problem = problem ?? "record \(entry.number) (\(candidate.name)) is damaged: \(found)"
                } catch let BackupError.damaged(_, reason) {
                    // Not an object at all (a FIFO, a directory): junk, skipped and named, never waited on.
                    problem = problem ?? "record \(entry.number) (\(candidate.name)) is junk: \(reason)"
                }
            }
            guard let record else {
                if isForeign && problem == nil {
                    foreign.append(entry.number)   // not this backup's: no break in its chain
                    continue
                }
                breaks.append((run, problem ?? "record \(entry.number) is damaged"))
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

    /// Checks that the backup is the one `receipt` came from and holds the
    /// record it names, or later ones: not replaced, nor rolled back to
    /// before it.
    ///
    /// - throws: ``BackupError/notAsExpected(location:reason:)``.
    func require(_ receipt: BackupReceipt, location: String) throws {
        guard owner == receipt.backup else {
            throw BackupError.notAsExpected(location: location, reason: "it is another backup than the one the receipt came from (replaced)")
        }
        if let record = records.first(where: { $0.number == receipt.record }) {
            guard HMACKey.equal(record.mac, receipt.mac) else {
                throw BackupError.notAsExpected(location: location, reason: "its record \(receipt.record) is not the one the receipt names (replaced)")
            }
            return
        }
        guard let newest = records.last, newest.number > receipt.record else {
            let end = records.last.map { "it ends at commit \($0.lastCommit)" } ?? "it holds no record of its own"
            throw BackupError.notAsExpected(location: location, reason: "\(end), before commit \(receipt.commit), which the receipt says was shipped (rolled back: its newest records removed)")
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
                    problem: target == .latest && !later.isEmpty ? later.joined(separator: "; ") : nil, skipped: skipped)
    }

    /// The records of another backup that were skipped, named; nil when there were none.
    private var skipped: String? {
        guard !foreign.isEmpty else { return nil }
        let names = Self.merged(foreign.map { ($0, $0) }).map { $0.0 == $0.1 ? "\($0.0)" : "\($0.0) to \($0.1)" }.joined(separator: ", ")
        let one = foreign.count == 1
        return (one ? "record \(names) belongs" : "records \(names) belong") + " to another backup (copied in) and " + (one ? "was" : "were") + " skipped"
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
        merged(starts.sorted(by: { $0.firstCommit < $1.firstCommit }).map { ($0.firstCommit, $0.lastCommit) })
            .map { $0.0 == $0.1 ? "commit \($0.0)" : "commits \($0.0) to \($0.1)" }.joined(separator: ", ")
    }

    /// `ranges`, in order of their starts, with those that overlap or touch joined.
    private static func merged(_ ranges: [(UInt64, UInt64)]) -> [(UInt64, UInt64)] {
        var merged: [(UInt64, UInt64)] = []
        for range in ranges {
            if let last = merged.last, range.0 <= last.1 + 1 {
                merged[merged.count - 1].1 = max(last.1, range.1)
            } else {
                merged.append(range)
            }
        }
        return merged
    }
}
