import Foundation
import Synchronization
import TestFixtures
import XCTest
@testable import DBCrypt
@testable import DBCryptS3

/// A continuous backup shipping to a real S3 server (Ceph's RADOS Gateway,
/// scripts/s3-server) while its app commits without pause, and killed two
/// ways. The app (the test helper's `continuous-backup-app`) killed with
/// SIGKILL at random moments, and started again on the same database and
/// prefix (its writer's lease, held by a process now gone, is taken over at
/// once): after every kill, a restore of the latest commit from the bucket
/// is a state the app had (rows 1...n, each with its own text, and the
/// tally saying n) and holds every commit the backup reported shipped. The
/// gateway killed with SIGKILL mid-shipping, again and again, and started
/// after a random moment: the app's commits go on while it is down, the
/// backup's failed rounds are retried, it catches up with every commit
/// made meanwhile, and the bucket holds each record once, unbroken (a
/// record written twice, or one lost, would break the chain or the
/// numbering). `make test` runs a few kills of each kind, `make
/// kill-tests` the full campaign (``KillCampaign``).
final class S3ContinuousBackupKillTests: XCTestCase {
    let key = "s3 continuous kill test key"
    let server = S3TestServer.shared

    func testKilledAppLosesNoCommitItsBackupShipped() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let location = server.freshLocation("kill")
        let storage = try storage(location)
        let points = Array(repeating: KillPoint.random, count: KillCampaign.kills(quick: 4, full: 12))
        var shippedSoFar: UInt64 = 0
        var landed = 0, restores = 0
        for point in points {
            let output = AppOutput()
            if try runAndKill(at: point, typicalDuration: 1.5, target: app(path, location, output: output)) { landed += 1 }
            let printed = output.finish()
            // Every run is killed: none ends by itself (a refused lease, a failed commit).
            XCTAssertTrue(printed.other.isEmpty, "the app said: \(printed.other.prefix(5))")
            shippedSoFar = max(shippedSoFar, printed.shipped)
            guard FileManager.default.fileExists(atPath: path), !(try BackupCatalog(storage)).snapshots.isEmpty else {
                continue   // killed before its first snapshot
            }
            let restored = dir.appendingPathComponent("restored.db").path
            removeDatabaseFiles(restored)
            let result = try ContinuousBackup.restore(from: storage, key: .named(key), to: restored)
            restores += 1
            XCTAssertNil(result.problem, "killed \(point)")
            XCTAssertGreaterThanOrEqual(result.commit, shippedSoFar, "killed \(point): a commit reported shipped is not in the backup")
            let rows = try checkBackupAppState(restored, key: key)
            // Killed between a commit and its line, a run holds one row more than it said.
            if printed.committed > 0 { XCTAssertLessThanOrEqual(rows, printed.committed + 1, "killed \(point): more rows than the app committed") }
        }
        XCTAssertEqual(landed, points.count, "the app ended by itself before a kill")
        XCTAssertGreaterThan(restores, points.count / 2, "most kills came before a first snapshot: the test proves little")
        XCTAssertGreaterThan(shippedSoFar, 0)
        print("S3 continuous backup: \(landed) kills of the app landed, \(restores) restores from the bucket each held every commit reported shipped (up to \(shippedSoFar))")
    }

    func testGatewayKilledMidShippingLosesNothingAndAcceptsNoDuplicate() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let location = server.freshLocation("outage")
        let storage = try storage(location)
        let restored = dir.appendingPathComponent("restored.db").path
        let outages = KillCampaign.kills(quick: 3, full: 10)
        // Four attempts a request (at most 0.9-1.75 s of backing off): an
        // outage shorter than that is ridden out within a request (a write
        // that landed before the kill is found there on its retry), a
        // longer one fails the round, and the next round tries again.
        let attempts = 4
        var committedWhileDown = 0, failedRounds = 0, outagesThatFailedRounds = 0
        var longestCatchUp: TimeInterval = 0, longestDown: TimeInterval = 0
        var lastUp = 0
        var downtimes: [ClosedRange<Date>] = []
        let output = AppOutput()
        var started = Date()
        let printed: AppOutput.Printed = try server.withGatewayAlone {
            started = Date()   // once no other test uses the gateway
            // An app at 400 commits a second, with a snapshot every 5 s: this machine's
            // one-node Ceph shares its 2 cores with the app and cannot keep up with
            // one that commits without pause and takes a snapshot of its whole file
            // every 400 ms (the log then outgrows the backlog bound at the full
            // campaign's counts, and the backup lets go, as it should).
            let process = try app(path, location, output: output, environment: [
                "DBCRYPT_TEST_S3_ATTEMPTS": String(attempts), "DBCRYPT_TEST_COMMITS_PER_SECOND": "400", "DBCRYPT_TEST_SNAPSHOT_MS": "5000",
            ]).start()
            defer {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
            }
            assertEventually("the backup shipped nothing: \(output.printed.other.prefix(5))") {
                output.printed.shippedLines >= 3 && output.printed.committed >= 20
            }
            // A commit's number in the backup is its row plus this, in one run of the app.
            removeDatabaseFiles(restored)
            let first = try ContinuousBackup.restore(from: storage, key: .named(key), to: restored)
            XCTAssertNil(first.problem)
            let offset = Int(first.commit) - (try checkBackupAppState(restored, key: key))

            for outage in 1...outages {
                pause(Double.random(in: 0...0.6))   // a random moment in the shipping
                let before = output.printed
                try server.killGateway()
                let killed = Date()
                // The app commits on while nothing can be shipped.
                assertEventually("outage \(outage): no commit while the gateway was down", timeout: 20) {
                    output.printed.committed >= before.committed + 20
                }
                pause(Double.random(in: 0...1.2))
                let down = output.printed
                XCTAssertGreaterThan(down.committed, before.committed, "outage \(outage)")
                try server.startGateway()
                let up = output.printed
                let restarted = Date()
                longestDown = max(longestDown, restarted.timeIntervalSince(killed))
                downtimes.append(killed...restarted)
                committedWhileDown += up.committed - before.committed
                lastUp = up.committed
                // Shipping resumes, and catches up with every commit made while the gateway was down.
                assertEventually("outage \(outage): the backup did not catch up (shipped \(output.printed.shipped), row \(up.committed) is commit \(up.committed + offset)); it said \(output.printed.failures.suffix(3))") {
                    output.printed.shipped >= UInt64(max(0, up.committed + offset))
                }
                longestCatchUp = max(longestCatchUp, Date().timeIntervalSince(restarted))
                let failed = output.printed.failures.count - before.failures.count
                failedRounds += failed
                if failed > 0 { outagesThatFailedRounds += 1 }
                XCTAssertTrue(process.isRunning, "outage \(outage): the app stopped: \(output.printed.other.prefix(5))")
            }
            // The app never stops by itself (SIGTERM would end it as abruptly): killed mid-commit.
            XCTAssertTrue(process.isRunning, "the app stopped: a commit failed? \(output.printed.other.prefix(5))")
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return output.finish()
        }
        let elapsed = Date().timeIntervalSince(started)

        removeDatabaseFiles(restored)
        let result = try ContinuousBackup.restore(from: storage, key: .named(key), to: restored)
        // No record damaged, missing or written twice: the chain holds from the first snapshot to the last commit.
        XCTAssertNil(result.problem)
        XCTAssertGreaterThanOrEqual(result.commit, printed.shipped, "a commit reported shipped is not in the backup")
        let rows = try checkBackupAppState(restored, key: key)
        XCTAssertLessThanOrEqual(rows, printed.committed + 1, "more rows than the app committed")
        XCTAssertGreaterThanOrEqual(rows, lastUp, "a commit made while the gateway was down is not in the backup")
        // Each record number once, none missing: a record the gateway took
        // before it died and the retry wrote again would be there twice.
        let catalog = try BackupCatalog(storage)
        let numbers = catalog.entries.map(\.number)
        XCTAssertEqual(Dictionary(grouping: numbers, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted(), [])
        XCTAssertEqual(numbers, Array(1...(numbers.last ?? 1)), "record numbers missing")
        XCTAssertTrue(printed.other.isEmpty, "the app said: \(printed.other.prefix(5))")
        let reasons = Set(printed.failures.map(Self.reason)).sorted()
        // A commit's pause that overlaps an outage counts as the outage's.
        let (pausesDown, pausesUp) = printed.pauses.reduce(into: (0.0, 0.0)) { longest, pause in
            let range = pause.end.addingTimeInterval(-pause.length)...pause.end
            if downtimes.contains(where: { $0.overlaps(range) }) { longest.0 = max(longest.0, pause.length) } else { longest.1 = max(longest.1, pause.length) }
        }
        print("S3 continuous backup: \(outages) kills of the gateway mid-shipping (down up to \(Self.ms(longestDown)) ms), the app committed on "
              + "(\(committedWhileDown) commits while it was down, \(printed.committed) in all, longest pause between commits \(Self.ms(pausesDown)) ms while it was down, \(Self.ms(pausesUp)) ms while up), "
              + "\(failedRounds) rounds failed in \(outagesThatFailedRounds) outages and were retried, caught up within \(Self.ms(longestCatchUp)) ms of each restart; "
              + "the restore held every commit reported shipped (up to \(printed.shipped)), \(numbers.count) records each once, "
              + "\(catalog.superseded.count) superseded, in \(Int(elapsed)) s; rounds failed with: \(reasons)")
    }

    // MARK: - Helpers

    /// The test helper's app on `path`, shipping to `location`, what it prints (its errors too) to `output`.
    private func app(_ path: String, _ location: String, output: AppOutput, environment: [String: String] = [:]) -> KillTarget {
        var variables = server.environment.merging(environment) { $1 }
        variables["DBCRYPT_TEST_KEY"] = TestKeys.text(named: key)
        // exec: the helper is the process killed.
        return KillTarget("/bin/sh", ["-c", "exec \"$0\" \"$@\" 2>&1", testHelperPath, "continuous-backup-app", path, location],
                          environment: variables, output: .to(output.pipe.fileHandleForWriting))
    }

    /// The storage at `location`, emptied at the end of the test when it
    /// passed (the gateway's one disk takes hundreds of MB a run), kept for
    /// a look when it failed.
    private func storage(_ location: String) throws -> S3BackupStorage {
        let storage = S3BackupStorage(try S3Location(location, endpoint: URL(string: server.endpoint), region: server.region),
                                      credentials: S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: server.secretAccessKey))
        addTeardownBlock { [weak self] in
            guard let run = self?.testRun, run.totalFailureCount == 0 else { return print("S3 continuous backup: the failed test's records are kept in \(location)") }
            if let names = try? storage.list() { try? storage.delete(names) }
        }
        return storage
    }

    /// A failure's message without its object's name: one per kind.
    private static func reason(_ failure: String) -> String {
        failure.replacingOccurrences(of: #"s3://\S+"#, with: "s3://…", options: .regularExpression)
    }

    private static func ms(_ seconds: TimeInterval) -> Int { Int(seconds * 1000) }
}

/// What the app prints, read as it prints it (a pipe it filled would stop its commits).
private final class AppOutput: @unchecked Sendable {
    struct Printed: Sendable {
        /// The last "committed N".
        var committed = 0
        /// The highest "shipped C", and how many such lines.
        var shipped: UInt64 = 0
        var shippedLines = 0
        /// Each "failed ERROR": a round of the backup that failed.
        var failures: [String] = []
        /// Any other line: the app's error, when it stopped by itself.
        var other: [String] = []
        var lastCommit: Date?
        /// Each time of 50 ms or more between two commits, and when it ended.
        var pauses: [(end: Date, length: TimeInterval)] = []
    }

    let pipe = Pipe()
    private let state = Mutex(Printed())
    private let ended = DispatchSemaphore(value: 0)

    init() {
        let handle = pipe.fileHandleForReading
        Thread { [self] in
            var pending = Data()
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                pending.append(data)
                while let newline = pending.firstIndex(of: 10) {
                    take(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            ended.signal()
        }.start()
    }

    var printed: Printed { state.withLock { $0 } }

    /// Once the app ended: everything it printed.
    func finish() -> Printed {
        try? pipe.fileHandleForWriting.close()
        XCTAssertEqual(ended.wait(timeout: .now() + 30), .success, "the app's output did not end")
        return printed
    }

    private func take(_ line: String) {
        state.withLock { printed in
            if line.hasPrefix("committed "), let n = Int(line.dropFirst(10)) {
                let now = Date()
                if let last = printed.lastCommit, now.timeIntervalSince(last) >= 0.05 { printed.pauses.append((now, now.timeIntervalSince(last))) }
                printed.lastCommit = now
                printed.committed = n
            } else if line.hasPrefix("shipped "), let commit = UInt64(line.dropFirst(8)) {
                printed.shipped = max(printed.shipped, commit)
                printed.shippedLines += 1
            } else if line.hasPrefix("failed ") {
                printed.failures.append(String(line.dropFirst(7)))
            } else if line != "checkpointed", !line.isEmpty {
                printed.other.append(line)
            }
        }
    }
}
