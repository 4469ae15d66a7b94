import Dispatch
import Foundation
import TestFixtures
import XCTest
@testable import DBCrypt
@testable import DBCryptS3

/// `S3BackupStorage` against a real S3 server, Ceph's RADOS Gateway on
/// loopback (scripts/s3-server): the four operations, conditional writes,
/// multipart uploads, listing past one page, and each refusal named.
final class S3BackupStorageTests: XCTestCase {
    let server = S3TestServer.shared

    func storage(_ url: String? = nil, credentials: S3Credentials? = nil, endpoint: String? = nil, addressing: S3Location.Addressing? = nil,
                 options: S3BackupStorage.Options = S3BackupStorage.Options()) throws -> S3BackupStorage {
        let location = try S3Location(url ?? server.freshLocation(), endpoint: URL(string: endpoint ?? server.endpoint), region: server.region,
                                      addressing: addressing)
        return S3BackupStorage(location, credentials: credentials ?? S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: server.secretAccessKey),
                               options: options)
    }

    func testObjectsAreWrittenOnceReadListedAndDeleted() throws {
        let storage = try storage()
        XCTAssertEqual(try storage.list(), [])
        let object = Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        try storage.put("0000000001-frames", object)
        try storage.put("0000000002-frames", Data())
        XCTAssertEqual(try storage.get("0000000001-frames"), object)
        XCTAssertEqual(try storage.get("0000000002-frames"), Data())
        XCTAssertEqual(Set(try storage.list()), ["0000000001-frames", "0000000002-frames"])

        // Never replaced: the conditional write refuses, and the object is unchanged.
        XCTAssertThrowsError(try storage.put("0000000001-frames", Data("other".utf8))) { error in
            guard case BackupError.objectExists(let location) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(location.hasSuffix("/0000000001-frames"), location)
        }
        XCTAssertEqual(try storage.get("0000000001-frames"), object)
        XCTAssertThrowsError(try storage.get("0000000009-frames")) { error in
            guard case BackupError.objectNotFound = error else { return XCTFail("\(error)") }
        }
        try storage.delete("0000000001-frames")
        try storage.delete("0000000001-frames")   // not there: nothing to do
        XCTAssertEqual(try storage.list(), ["0000000002-frames"])
        XCTAssertThrowsError(try storage.put("../escape", object))
    }

    func testListingGoesPastOnePageAndDeletingTakesBatches() throws {
        let storage = try storage()
        let names = (1...1050).map { String(format: "%010d-frames", $0) }
        let failures = ManagedFailures()
        DispatchQueue.concurrentPerform(iterations: 6) { worker in
            for name in names.enumerated().filter({ $0.offset % 6 == worker }).map(\.element) {
                do { try storage.put(name, Data(name.utf8)) } catch { failures.add("\(name): \(error)") }
            }
        }
        XCTAssertEqual(failures.all, [])
        let listed = try storage.list()
        XCTAssertEqual(listed.count, 1050, "a listing stopped at its first page")
        XCTAssertEqual(Set(listed), Set(names))
        try storage.delete(names)
        XCTAssertEqual(try storage.list(), [])
    }

    func testLargeObjectsGoUpInPartsAndAreNeverReplacedEither() throws {
        var options = S3BackupStorage.Options()
        options.multipartThreshold = 5 << 20
        options.partSize = 5 << 20
        let storage = try storage(options: options)
        var generator = SystemRandomNumberGenerator()
        let words = (0..<((12 << 20) / 8 + 1544)).map { _ in generator.next() as UInt64 }
        let object = words.withUnsafeBytes { Data($0) }
        try storage.put("0000000001-snapshot-0", object)
        XCTAssertEqual(try storage.get("0000000001-snapshot-0"), object)
        XCTAssertEqual(try storage.list(), ["0000000001-snapshot-0"], "the claim is not listed")
        XCTAssertThrowsError(try storage.put("0000000001-snapshot-0", object.prefix(6 << 20))) { error in
            guard case BackupError.objectExists = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try storage.get("0000000001-snapshot-0"), object)
        try storage.delete("0000000001-snapshot-0")
        XCTAssertEqual(try storage.list(), [])
        // The claim went with the record: the name can be written again.
        try storage.put("0000000001-snapshot-0", object)
    }

    func testVirtualHostedAddressingReachesTheSameBucket() throws {
        let url = server.freshLocation()
        let pathStyle = try storage(url)
        let endpoint = try XCTUnwrap(URL(string: server.endpoint))
        let virtual = try storage(url, endpoint: "http://localhost:\(endpoint.port!)", addressing: .virtualHosted)
        try virtual.put("0000000001-frames", Data("hello".utf8))
        XCTAssertEqual(try pathStyle.get("0000000001-frames"), Data("hello".utf8))
        XCTAssertEqual(try virtual.list(), ["0000000001-frames"])
    }

    func testAWrongSecretIsNamedWithoutTheSecret() throws {
        let wrongSecret = "wrong-" + server.secretAccessKey.dropFirst(6)
        let storage = try storage(credentials: S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: String(wrongSecret)))
        XCTAssertThrowsError(try storage.put("0000000001-frames", Data("x".utf8))) { error in
            guard case BackupError.storageRefused(_, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("secret access key") && reason.contains("SignatureDoesNotMatch"), reason)
            XCTAssertFalse("\(error)".contains(wrongSecret) || "\(error)".contains(server.secretAccessKey), "the message holds the secret")
            XCTAssertEqual((error as? any DBCryptError)?.category, .storage)
        }
        let unknown = try self.storage(credentials: S3Credentials(accessKeyID: "NOSUCHKEY0000000", secretAccessKey: "x"))
        XCTAssertThrowsError(try unknown.list()) { error in
            XCTAssertTrue("\(error)".contains("InvalidAccessKeyId"), "\(error)")
        }
    }

    func testAMissingBucketAndAUserThatMayNotWriteAreNamed() throws {
        let missing = try storage("s3://no-such-bucket-dbcrypt/x")
        XCTAssertThrowsError(try missing.list()) { error in
            guard case BackupError.storageRefused(_, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("there is no bucket no-such-bucket-dbcrypt"), reason)
        }
        let url = server.freshLocation()
        try storage(url).put("0000000001-frames", Data("data".utf8))
        let reader = try storage(url, credentials: S3Credentials(accessKeyID: server.readerAccessKeyID, secretAccessKey: server.readerSecretAccessKey))
        XCTAssertEqual(try reader.list(), ["0000000001-frames"])
        XCTAssertEqual(try reader.get("0000000001-frames"), Data("data".utf8))
        XCTAssertThrowsError(try reader.put("0000000002-frames", Data("data".utf8))) { error in
            guard case BackupError.storageRefused(_, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("may not write objects") && reason.contains("AccessDenied"), reason)
        }
        XCTAssertThrowsError(try reader.delete(["0000000001-frames"])) { error in
            guard case BackupError.storageRefused = error else { return XCTFail("\(error)") }
        }
    }

    func testAWriteRetriedAcrossAGatewayRestartLandsOnce() throws {
        var options = S3BackupStorage.Options()
        options.maximumAttempts = 12
        let storage = try storage(options: options)
        try server.killGateway()
        let done = DispatchSemaphore(value: 0)
        let result = ManagedFailures()
        DispatchQueue.global().async {
            do { try storage.put("0000000001-frames", Data("survives".utf8)) } catch { result.add("\(error)") }
            done.signal()
        }
        // The first attempt meets a dead gateway; the retries meet a live one.
        try server.startGateway()
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(result.all, [])
        XCTAssertEqual(try storage.get("0000000001-frames"), Data("survives".utf8))
        XCTAssertEqual(try storage.list(), ["0000000001-frames"])
    }

    func testAGatewayThatStaysDownIsAStorageFailureAfterTheRetries() throws {
        var options = S3BackupStorage.Options()
        options.maximumAttempts = 2
        let storage = try storage("s3://\(server.bucket)/x", endpoint: "http://127.0.0.1:9", options: options)
        XCTAssertThrowsError(try storage.list()) { error in
            guard case BackupError.storageFailed(_, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("refused") && reason.contains("2 attempts"), reason)
        }
    }
}

/// Failures collected from several threads.
final class ManagedFailures: @unchecked Sendable {
    private let lock = NSLock()
    private var failures: [String] = []
    func add(_ failure: String) { lock.lock(); failures.append(failure); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return failures }
}
