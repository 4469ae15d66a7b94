import DBCrypt
import DBCryptCore
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
/// - Keeping it: before each write, once a third of the lease has passed,
///   it is renewed with `If-Match`; an idle writer lets it lapse, and
///   renews it before its next write. A renewal that finds another
///   writer's lease means the claim was lost: that write is refused.
/// - Giving it up: it is rewritten as lapsed (`If-Match`), so the next
///   writer takes it at once.
///
/// Two writers can overlap only when clocks differ by more than
/// ``margin``: S3 already refuses requests signed 15 minutes off.
final class S3WriterLease: Sendable {
    /// How long a lease lasts unless renewed.
    let duration: TimeInterval
    /// Time taken off a lease seen, for clocks that differ.
    static let margin: TimeInterval = 5

    private let client: S3Client
    private let key: String
    /// The lease held: its ETag and when it ends; nil when none is held.
    private let held = Mutex<(etag: String, expires: Date)?>(nil)
    /// Who this writer is: host, boot, process and a random part.
    private let writer: Holder

    init(client: S3Client, duration: Duration) {
        self.client = client
        self.duration = max(1, Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
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
            if try write(condition) { return }
            // Another writer took or renewed it in between: look again.
        }
        throw BackupError.destinationInUse(location: client.location.description)
    }

    /// Renews the lease when a third of it has passed, before a write.
    ///
    /// - throws: ``BackupError/destinationInUse(location:)`` when another
    ///   writer holds it now; the storage's errors.
    func renewIfDue() throws {
        guard let lease = held.withLock({ $0 }) else { return }
        guard lease.expires.timeIntervalSinceNow < duration * 2 / 3 else { return }
        guard try write(("if-match", lease.etag)) else {
            held.withLock { $0 = nil }
            throw BackupError.destinationInUse(location: client.location.description)
        }
    }

    /// Gives the lease up: rewritten as lapsed, when it is still this writer's.
    func release() {
        guard let lease = held.withLock({ $0 }) else { return }
        var ended = writer
        ended.expires = Date(timeIntervalSince1970: 0)
        _ = try? client.send("PUT", key: key, headers: [("if-match", lease.etag)], body: ended.document)
        held.withLock { $0 = nil }
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
            held.withLock { $0 = (Self.unquoted(etag), lease.expires) }
            return true
        case 412 where response.attempts > 1:
            // An earlier attempt may have landed: the lease is this writer's if it says so.
            let current = try client.send("GET", key: key)
            guard current.status == 200, let holder = Holder(current.body), holder.id == writer.id, let etag = current.headers["etag"] else { return false }
            held.withLock { $0 = (Self.unquoted(etag), holder.expires) }
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
    /// SHA-256 of its host name and boot, so the bucket's holder learns
    /// neither: only whether two writers ran on one machine since its boot.
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
            let machine = boot.isEmpty ? UUID().uuidString : Data("\(ProcessInfo.processInfo.hostName)\n\(boot)".utf8).withUnsafeBytes {
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
