import Foundation
import TestFixtures
import XCTest
@testable import DBCrypt
@testable import DBCryptS3

/// A continuous backup shipping to a real S3 server (Ceph's RADOS Gateway,
/// scripts/s3-server) and restored from it: every commit, the bucket's
/// contents, records tampered with in the bucket, two writers on one
/// prefix, and snapshots large enough to go up in parts.
final class S3ContinuousBackupTests: XCTestCase {
    let key = DatabaseKey.named("s3 continuous backup test key")
    let server = S3TestServer.shared
    static let marker = "plaintext-marker-s3-51c9"

    func testEveryShippedCommitIsRestoredAndTheBucketHoldsNoKeyAndNoPlaintext() throws {
        let dir = try makeTemporaryDirectory(self)
        let (pool, storage) = try makePool(dir)
        var shipped: [(commit: UInt64, rows: Int)] = []
        for round in 1...5 {
            try insert(pool, count: round)
            shipped.append((try XCTUnwrap(try pool.continuousBackup?.shipNow()).commit, try count(pool)))
        }
        try pool.close()
        for (commit, rows) in [shipped[1], shipped[4]] {
            let restored = dir.appendingPathComponent("restored-\(commit).db").path
            let result = try ContinuousBackup.restore(from: storage, key: key, to: restored, target: .commit(commit))
            XCTAssertEqual(result.commit, commit)
            XCTAssertNil(result.problem)
            try checkRestored(restored, rows: rows)
        }

        // Every object under the prefix, claims included: no row's text, no passphrase, no key.
        let needles = try secretsABackupMustNotHold(pool.path, key: key, passphrase: "s3 continuous backup test key", marker: Self.marker)
        let keys = try everyKey(storage)
        XCTAssertGreaterThan(keys.count, 2)
        let client = try rawClient(storage)
        for key in keys {
            let object = try client.send("GET", key: key).body
            for needle in needles { XCTAssertNil(object.range(of: needle), "\(key) holds a secret or a row") }
        }
        // The control: the marker is findable where it is in the clear.
        let plain = dir.appendingPathComponent("plain.db").path
        try DatabaseEncryption.decrypt(pool.path, key: key, to: plain)
        XCTAssertNotNil(try Data(contentsOf: URL(fileURLWithPath: plain)).range(of: Data(Self.marker.utf8)))
    }

    /// What the bucket's holder can do: write any object over any record.
    func testRecordsTamperedWithInTheBucketAreNamedAtRestore() throws {
        let other = try makeBackup()
        let cases: [(String, (S3Client, S3BackupStorage, [BackupCatalog.Entry]) throws -> Void, String)] = [
            ("changed", { client, storage, frames in
                var data = try storage.get(frames[2].name)
                data[data.count - 10] ^= 1
                _ = try client.send("PUT", key: storage.s3.key(frames[2].name), body: data)
            }, "cut short or changed"),
            ("deleted", { _, storage, frames in try storage.delete(frames[2].name) }, "is missing"),
            ("replayed", { client, storage, frames in
                _ = try client.send("PUT", key: storage.s3.key(frames[2].name), body: try storage.get(frames[1].name))
            }, "not the one its name says"),
            ("swapped in from another backup", { client, storage, frames in
                let foreign = try BackupCatalog(other.storage).entries.filter { $0.kind == .frames }[2]
                _ = try client.send("PUT", key: storage.s3.key(frames[2].name), body: try other.storage.get(foreign.name))
            }, "not the one its name says"),
        ]
        for (label, damage, says) in cases {
            let (storage, dir, commits) = try makeBackup()
            let frames = try BackupCatalog(storage).entries.filter { $0.kind == .frames }
            try damage(try rawClient(storage), storage, frames)
            let restored = dir.appendingPathComponent("restored.db").path
            let result = try ContinuousBackup.restore(from: storage, key: key, to: restored)
            XCTAssertTrue(result.problem?.contains(says) == true, "\(label): \(result.problem ?? "no problem found")")
            XCTAssertTrue(result.problem?.contains("record \(frames[2].number)") == true, "\(label): \(result.problem ?? "")")
            XCTAssertLessThan(result.commit, commits.last!.commit, label)
            try checkRestored(restored, rows: commits.first { $0.commit == result.commit }!.rows)
        }
    }

    /// S3 has no lock: the writer's lease refuses a second backup on the
    /// prefix while the first runs, lets the next take over once the first
    /// stopped, and a writer whose lease another took stops at its next write.
    func testOneWriterAtATimeOnAPrefix() throws {
        let dir = try makeTemporaryDirectory(self)
        let (pool, storage) = try makePool(dir)
        try insert(pool, count: 3)
        try pool.continuousBackup?.shipNow()
        var manual = ContinuousBackup.Options()
        manual.interval = .seconds(3600)
        XCTAssertThrowsError(try ContinuousBackup(path: pool.path, key: key, storage: storage, options: manual)) { error in
            XCTAssertEqual(error as? BackupError, .destinationInUse(location: storage.location))
            XCTAssertTrue("\(error)".contains("Another backup is writing to s3://"), "\(error)")
        }
        try pool.close()
        // Stopped: the lease was given up, and the next writer takes it at once.
        var shortLease = S3BackupStorage.Options()
        shortLease.leaseDuration = .seconds(1)
        let next = S3BackupStorage(storage.s3, credentials: credentials, options: shortLease)
        let second = try ContinuousBackup(path: pool.path, key: key, storage: next, options: manual)
        let reopened = try DatabasePool(path: pool.path, key: key)
        try insert(reopened, count: 1)
        let shipped = try XCTUnwrap(try second.shipNow())

        // Another writer takes the lease over (as one would once this one's lapsed):
        // this one's next write renews first, finds it, and the backup ends.
        let taken = try rawClient(storage).send("PUT", key: storage.s3.key(".writer"),
                                                body: Data("dbcrypt writer lease 1\nother\nanother-machine\n1\n\(Int64(Date().timeIntervalSince1970 * 1000) + 60_000)\n".utf8))
        XCTAssertEqual(taken.status, 200)
        var last = (commit: shipped.commit, rows: 4)
        let stopped = waitUntil(timeout: 10, every: 0.05) {
            try? self.insert(reopened, count: 1)
            guard let commit = try? second.shipNow() else { return true }
            last = (commit.commit, (try? self.count(reopened)) ?? 0)
            return false
        }
        XCTAssertTrue(stopped, "the backup went on writing beside another writer")
        XCTAssertThrowsError(try second.shipNow()) { error in
            XCTAssertEqual(error as? BackupError, .destinationInUse(location: next.location))
        }
        try reopened.close()
        let restored = dir.appendingPathComponent("restored.db").path
        let result = try ContinuousBackup.restore(from: storage, key: key, to: restored)
        XCTAssertNil(result.problem)
        XCTAssertEqual(result.commit, last.commit)
        try checkRestored(restored, rows: last.rows)
    }

    func testASnapshotAbove64MiBGoesUpInPartsAndRestores() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let plain = try DatabasePool(path: path, key: key)
        try plain.write { db in
            try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT); CREATE TABLE big(id INTEGER PRIMARY KEY, blob BLOB)")
            for _ in 0..<68 { try db.execute("INSERT INTO big(blob) VALUES (randomblob(1048576))") }
        }
        try plain.close()
        // The backup begins with a snapshot of all of it.
        let (pool, storage) = try makePool(dir)
        let digest = try pool.read { db in try db.fetchScalar(String.self, "SELECT group_concat(hex(substr(blob, 1 + id * 1000, 16)), '') FROM big") }
        try pool.continuousBackup?.shipNow()
        try pool.close()
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: pool.path)[.size] as? Int)
        XCTAssertGreaterThan(size, 64 << 20)
        let snapshotParts = try BackupCatalog(storage).entries.filter { $0.kind == .snapshot }
        XCTAssertGreaterThanOrEqual(snapshotParts.count, 4)
        // Each part of 16 MiB went up as a multipart upload, claimed first.
        XCTAssertTrue(try everyKey(storage).contains { $0.contains("/.claim-") }, "no record went up in parts")
        let restored = dir.appendingPathComponent("restored.db").path
        let result = try ContinuousBackup.restore(from: storage, key: key, to: restored)
        XCTAssertNil(result.problem)
        let db = try Database(path: restored, key: key)
        defer { db.close() }
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM big"), 68)
        XCTAssertEqual(try db.fetchScalar(String.self, "SELECT group_concat(hex(substr(blob, 1 + id * 1000, 16)), '') FROM big"), digest)
    }

    // MARK: - Helpers

    private func makePool(_ dir: URL) throws -> (DatabasePool, S3BackupStorage) {
        let location = try S3Location(server.freshLocation(), endpoint: URL(string: server.endpoint), region: server.region)
        let storage = S3BackupStorage(location, credentials: credentials)
        var manual = ContinuousBackup.Options()
        manual.interval = .seconds(3600)
        var options = Database.Options()
        options.continuousBackup = .init(storage: storage, options: manual)
        let pool = try TestFixtures.makePool(dir.appendingPathComponent("app.db").path, key: key, options: options,
                                             schema: "CREATE TABLE IF NOT EXISTS item(id INTEGER PRIMARY KEY, body TEXT)")
        return (pool, storage)
    }

    /// A backup of 6 rounds of one row each: the commits and the rows each had.
    private func makeBackup() throws -> (storage: S3BackupStorage, dir: URL, commits: [(commit: UInt64, rows: Int)]) {
        let dir = try makeTemporaryDirectory(self)
        let (pool, storage) = try makePool(dir)
        var commits: [(commit: UInt64, rows: Int)] = []
        for _ in 0..<6 {
            try insert(pool, count: 1)
            commits.append((try XCTUnwrap(try pool.continuousBackup?.shipNow()).commit, try count(pool)))
        }
        try pool.close()
        return (storage, dir, commits)
    }

    private var credentials: S3Credentials { S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: server.secretAccessKey) }

    /// A client that sends any request to the storage's bucket, unconditionally.
    private func rawClient(_ storage: S3BackupStorage) throws -> S3Client {
        S3Client(location: storage.s3, credentials: S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: server.secretAccessKey),
                 maximumAttempts: 3, timeout: .seconds(30))
    }

    /// Every key under the storage's prefix, claims included.
    private func everyKey(_ storage: S3BackupStorage) throws -> [String] {
        let response = try rawClient(storage).send("GET", key: nil, query: [("list-type", "2"), ("prefix", storage.s3.keyPrefix)])
        return try XCTUnwrap(S3XML(response.body)).all("Contents/Key")
    }

    private func insert(_ pool: DatabasePool, count: Int) throws {
        for _ in 0..<count {
            try pool.write { db in try db.execute("INSERT INTO item(body) VALUES (? || hex(randomblob(100)))", [Self.marker]) }
        }
    }

    private func count(_ pool: DatabasePool) throws -> Int {
        try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM item") ?? 0 }
    }

    private func checkRestored(_ path: String, rows: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        var options = Database.Options()
        options.readOnly = true
        let db = try Database(path: path, key: key, options: options)
        defer { db.close() }
        XCTAssertEqual(try db.integrityProblems(), [], file: file, line: line)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM item"), rows, file: file, line: line)
    }
}
