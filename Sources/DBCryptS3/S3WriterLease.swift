import DBCrypt
import DBCryptCore
import Dispatch
import Foundation
import Synchronization

/// The one writer of an S3 location: a lease held in the object `.writer`
/// under the prefix, taken and renewed with conditional writes (S3's only
/// compare-and-swap), since S3 has no lock that a killed writer would
/// release.
///
/// - Taking it: when there is none, `If-None-Match: *`; when the holder's
///   lease ran out, or the holder was a process of this machine that has
///   since ended (a restart after a crash goes on at once), `If-Match` on
///   the lease seen. A live holder's lease is refused:
///   ``BackupError/destinationInUse(location:)``.
/// - Keeping it: every third of the lease it is renewed with `If-Match`,
///   on a timer, whether the writer writes or not; a write when it is about
///   to lapse (the service was unreachable) renews it first. A renewal
///   that finds another writer's lease means the claim was lost: every
///   later write is refused.
/// - Giving it up: it is rewritten as lapsed (`If-Match`), so the next
///   writer takes it at once.
///
/// Two writers can overlap when clocks differ by more than ``margin`` (S3
/// already refuses requests signed 15 minutes off), or when a write that
/// began before a lapse lands after it (a request outlasting the margin).
final class S3WriterLease: @unchecked Sendable {
    // @unchecked: `renewal` is used under `timerLock` only; the rest is immutable or a Mutex.
    /// How long a lease lasts unless renewed.
    let duration: TimeInterval
    /// Time taken off a lease seen, for clocks that differ.
    static let margin: TimeInterval = 5

    private let client: S3Client
    private let key: String
    /// The lease: none taken, held (its ETag and when it ends), or lost to another writer.
    private let state = Mutex(LeaseState.none)
    /// One renewal at a time: two with the same ETag would each find the other's.
    private let renewing = NSLock()
    /// Renews the lease every third of it while held, whether the writer writes or not.
    private var renewal: DispatchSourceTimer?
    private let timerLock = NSLock()
    /// Who this writer is: its machine, its process and a random part.
    private let writer: Holder

    private enum LeaseState: Sendable {
        case none
        case held(etag: String, expires: Date)
        case lost
    }

    init(client: S3Client, duration: Duration) {
        self.client = client
        self.duration = max(1, duration.timeInterval)
        key = client.location.key(".writer")
        writer = Holder.this()
    }

    /// Takes the lease.
    ///
    /// - throws: ``BackupError/destinationInUse(location:)`` while another
    ///   writer holds it; the storage's errors.
    func take() throws {
        for _ in 0..<3 {
            let current = try client.send("GET", key: key)
            var condition: (String, String)
            switch current.status {
            case 200:
                let holder = Holder(current.body)
                guard holder.map({ $0.hasEnded(seenAt: Date()) }) ?? true else {
                    throw BackupError.destinationInUse(location: client.location.description)
                }
                guard let etag = current.headers["etag"] else { throw BackupError.storageFailed(location: client.describe(key), reason: "the lease has no ETag") }
                condition = ("if-match", Self.unquoted(etag))
            case 404 where current.errorCode != "NoSuchBucket":
                condition = ("if-none-match", "*")
            default:
                throw S3Refusal(current, credentials: client.accessKeyID, bucket: client.location.bucket, region: client.location.region,
                                operation: "read objects").error(at: client.describe(key))
            }
            if try write(condition) {
                startRenewing()
                return
            }
            // Another writer took or renewed it in between: look again.
        }
        throw BackupError.destinationInUse(location: client.location.description)
    }

    /// Before a write: throws when the lease was lost, and renews it first
    /// when it is about to lapse (the timer could not renew it: the
    /// service was unreachable). A storage that took no lease (a restore,
    /// a snapshot's one object) writes without one.
    ///
    /// - throws: ``BackupError/destinationInUse(location:)`` when another
    ///   writer holds it now; the storage's errors.
    func renewIfDue() throws {
        switch state.withLock({ $0 }) {
        case .none: return
        case .lost: throw BackupError.destinationInUse(location: client.location.description)
        case .held(_, let expires):
            guard expires.timeIntervalSinceNow < 2 * Self.margin else { return }
            try renew()
        }
    }

    /// Renews the lease with `If-Match` on the one held.
    ///
    /// - throws: ``BackupError/destinationInUse(location:)`` when another
    ///   writer's lease is there now; the storage's errors.
    private func renew() throws {
        renewing.lock()
        defer { renewing.unlock() }
        guard case .held(let etag, _) = state.withLock({ $0 }) else {
            if case .lost = state.withLock({ $0 }) { throw BackupError.destinationInUse(location: client.location.description) }
            return
        }
        guard try write(("if-match", etag)) else {
            state.withLock { $0 = .lost }
            stopRenewing()
            throw BackupError.destinationInUse(location: client.location.description)
        }
    }

    /// Renews the lease every third of its duration from now on, on a queue of its own.
    private func startRenewing() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "DBCryptS3.S3WriterLease"))
        let every = DispatchTimeInterval.milliseconds(Int(duration * 1000 / 3))
        timer.schedule(deadline: .now() + every, repeating: every)
        // A failure that passes leaves the lease to the next tick, or to the next write's check.
        timer.setEventHandler { [weak self] in try? self?.renew() }
        timer.resume()
        timerLock.lock()
        renewal = timer
        timerLock.unlock()
    }

    private func stopRenewing() {
        timerLock.lock()
        defer { timerLock.unlock() }
        renewal?.cancel()
        renewal = nil
    }

    deinit { stopRenewing() }

    /// Gives the lease up: rewritten as lapsed, when it is still this writer's.
    func release() {
        stopRenewing()
        renewing.lock()
        defer { renewing.unlock() }
        guard case .held(let etag, _) = state.withLock({ $0 }) else { return }
        var ended = writer
        ended.expires = Date(timeIntervalSince1970: 0)
        _ = try? client.send("PUT", key: key, headers: [("if-match", etag)], body: ended.document)
        state.withLock { $0 = .none }
    }

    /// Writes this writer's lease under `condition`: false when the
    /// condition failed (another writer's lease is there).
    private func write(_ condition: (String, String)) throws -> Bool {
        var lease = writer
        lease.expires = Date().addingTimeInterval(duration)
        let response = try client.send("PUT", key: key, headers: [condition], body: lease.document)
        switch response.status {
        case 200..<300:
            guard let etag = response.headers["etag"] else { throw BackupError.storageFailed(location: client.describe(key), reason: "the lease has no ETag") }
            state.withLock { $0 = .held(etag: Self.unquoted(etag), expires: lease.expires) }
            return true
        case 412 where response.attempts > 1:
            // An earlier attempt may have landed: the lease is this writer's if it says so.
            let current = try client.send("GET", key: key)
            guard current.status == 200, let holder = Holder(current.body), holder.id == writer.id, let etag = current.headers["etag"] else { return false }
            state.withLock { $0 = .held(etag: Self.unquoted(etag), expires: holder.expires) }
            return true
        case 412, 404:
            // 404: radosgw answers If-Match on a missing object so (the lease was removed).
            return false
        default:
            throw S3Refusal(response, credentials: client.accessKeyID, bucket: client.location.bucket, region: client.location.region,
                            operation: "write objects").error(at: client.describe(key))
        }
    }

    /// radosgw matches `If-Match` only against an ETag without its quotes.
    private static func unquoted(_ etag: String) -> String { etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }

    /// What a lease says: who holds it and until when. The machine is a
    /// SHA-256 of its host name, boot and process namespace, so the
    /// bucket's holder learns none of them: only whether two writers ran
    /// on one machine (and in one container) since its boot.
    struct Holder: Sendable {
        var id: String
        var machine: String
        var process: Int32
        var expires: Date

        /// This process.
        static func this() -> Holder {
            let boot = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            // Without a boot id (not Linux) no machine is ever the same: a killed writer's lease lapses.
            // Containers share the boot id, and may share the host name, but not the process ids.
            let processes = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/pid")) ?? ""
            let machine = boot.isEmpty ? UUID().uuidString : Data("\(ProcessInfo.processInfo.hostName)\n\(boot)\n\(processes)".utf8).withUnsafeBytes {
                sha256($0).map { Hex.encode($0) } ?? UUID().uuidString
            }
            return Holder(id: UUID().uuidString, machine: machine, process: getpid(), expires: Date())
        }

        /// The lease document `data`, or nil when it is not one.
        init?(_ data: Data) {
            let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard lines.count >= 5, lines[0] == "dbcrypt writer lease 1", let process = Int32(lines[3]), let milliseconds = Double(lines[4]) else { return nil }
            self.init(id: lines[1], machine: lines[2], process: process, expires: Date(timeIntervalSince1970: milliseconds / 1000))
        }

        init(id: String, machine: String, process: Int32, expires: Date) {
            (self.id, self.machine, self.process, self.expires) = (id, machine, process, expires)
        }

        var document: Data {
            Data("dbcrypt writer lease 1\n\(id)\n\(machine)\n\(process)\n\(Int64(expires.timeIntervalSince1970 * 1000))\n".utf8)
        }

        /// Whether this lease no longer holds: it ran out, or its process
        /// ran on this machine since its last boot and is gone.
        func hasEnded(seenAt now: Date) -> Bool {
            if expires.addingTimeInterval(S3WriterLease.margin) < now { return true }
            let this = Holder.this()
            guard machine == this.machine else { return false }
            return process != this.process && kill(process, 0) != 0 && errno == ESRCH
        }
    }
}
