import DBCrypt
import Foundation
import XCTest

/// A full disk and a file-size limit in the middle of a write: one clear
/// sentence, exit status 1, the source byte for byte as it was, no temporary left.
final class DiskLimitCommandTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = try makeTemporaryDirectory(self)
    }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    func testAFileSizeLimitIsAClearErrorAndLeavesNothing() throws {
        // A sanitizer's runtime maps files of its own, which the limit breaks (SIGBUS).
        try skipIf(ProcessInfo.processInfo.environment["DBCRYPT_SANITIZER"] != nil, "ulimit -f stops the sanitizer's runtime")
        try makePlaintextDatabase(path("plain.db"), rows: 3000)
        let before = try contents(path("plain.db"))
        // ulimit -f counts 1024-byte blocks: the source is larger than 64 KiB.
        let run = try runProgram("/bin/sh", ["-c", "ulimit -f 64; exec \"$0\" \"$@\"", dbcryptPath,
                                                  "migrate", path("plain.db"), "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.0, 1, run.2)
        XCTAssertTrue(run.2.contains("file-size limit"), run.2)
        XCTAssertEqual(try contents(path("plain.db")), before)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(), ["plain.db"])
    }

    func testADiskThatFillsUpMidWriteIsNamedEveryTime() throws {
        // A tmpfs with room for the up-front check (1.2 times the source) but
        // not for the new file: rows of 500 bytes fill 4 KiB plaintext pages,
        // and take a whole 1 KiB page each in the SQLCipher 3 format.
        let mountPoint = try mountSmallDisk(self, in: dir, size: "3m")
        let source = mountPoint.appendingPathComponent("app.db").path
        let db = try Database(path: source)
        try db.execute("CREATE TABLE t(x BLOB)")
        try db.inTransaction { db in
            for _ in 0..<2_500 { try db.execute("INSERT INTO t VALUES (randomblob(500))") }
        }
        db.close()
        let before = try contents(source)
        for attempt in 0..<4 {
            let run = try dbcrypt(["migrate", source, "--format", "sqlcipher3", "--key-env", "KEY"], environment: keyEnvironment)
            XCTAssertEqual(run.status, 1, "attempt \(attempt): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("The disk filled up while writing beside"), "attempt \(attempt): \(run.stderr)")
            XCTAssertEqual(try contents(source), before)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mountPoint.path), ["app.db"])
        }
    }
}
