import Foundation
import XCTest
@testable import DBCrypt

/// DBCrypt's crypto provider on SQLCipher 3.4.x: both formats at once from
/// many threads, and a page layout that does not fit refused, not overrun.
final class CipherProviderTests: XCTestCase {
    let key = "provider key"

    func testSixteenThreadsOpenReadAndCloseBothFormatsAtOnce() throws {
        let dir = try makeTemporaryDirectory(self)
        // Few KDF iterations: the threads open hundreds of connections.
        let formats = [CipherSettings(.sqlcipher3, kdfIterations: 2_000), CipherSettings(.sqlcipher4, kdfIterations: 2_000)]
        var paths: [String] = []
        for (i, settings) in formats.enumerated() {
            let path = dir.appendingPathComponent("f\(i).db").path
            var options = Database.Options()
            options.cipher = settings
            let db = try Database(path: path, key: .passphrase(key), options: options)
            try db.execute("CREATE TABLE t(v); INSERT INTO t VALUES (\(i))")
            db.close()
            paths.append(path)
        }
        let failures = ErrorLog()
        let files = paths, key = self.key
        DispatchQueue.concurrentPerform(iterations: 16) { thread in
            for round in 0..<25 {
                let which = (thread + round) % 2
                var options = Database.Options()
                options.cipher = formats[which]
                options.readOnly = true
                do {
                    let db = try Database(path: files[which], key: .passphrase(key), options: options)
                    let value = try db.fetchScalar(Int.self, "SELECT v FROM t")
                    if value != which || db.cipher?.format != formats[which].format {
                        failures.append("thread \(thread) read \(String(describing: value)) from format \(which)")
                    }
                    db.close()
                } catch {
                    failures.append("thread \(thread): \(error)")
                }
            }
        }
        XCTAssertEqual(failures.all, [])
    }

    /// The engine's random bytes (on 3.4.x the provider's buffered
    /// getrandom): two new files get different salts, and a page written
    /// again with the same content gets a new IV (the 16 bytes before its
    /// 64-byte HMAC, SQLCipher 4).
    func testNewFilesGetTheirOwnSaltsAndRewrittenPagesNewIVs() throws {
        let dir = try makeTemporaryDirectory(self)
        var options = Database.Options()
        options.cipher = CipherSettings(.sqlcipher4, kdfIterations: 2_000)
        var salts: [[UInt8]] = []
        for name in ["a.db", "b.db"] {
            let path = dir.appendingPathComponent(name).path
            let db = try Database(path: path, key: .passphrase(key), options: options)
            try db.execute("CREATE TABLE t(v); INSERT INTO t VALUES ('same')")
            db.close()
            salts.append(try fileHeader(path))
        }
        XCTAssertNotEqual(salts[0], salts[1])

        let path = dir.appendingPathComponent("a.db").path
        func pageTwoIV() throws -> [UInt8] {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            return Array(bytes[(2 * 4096 - 80)..<(2 * 4096 - 64)])
        }
        let before = try pageTwoIV()
        let db = try Database(path: path, key: .passphrase(key), options: options)
        // Through other content and back: SQLite 3.46 writes nothing for an
        // UPDATE that leaves a cell's bytes as they were.
        try db.execute("UPDATE t SET v = 'else'")
        try db.execute("UPDATE t SET v = 'same'")
        db.close()
        XCTAssertNotEqual(try pageTwoIV(), before)
        XCTAssertNotEqual(before, [UInt8](repeating: 0, count: 16))
    }

    func testSHA512HMACWithASHA1ReserveIsRefusedNotOverrun() throws {
        try skipUnless(try CipherInfo.linked().usesDBCryptProvider, "only SQLCipher 3.4.x uses DBCrypt's provider")
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("v3.db").path
        var options = Database.Options()
        options.cipher = .sqlcipher3
        let db = try Database(path: path, key: .passphrase(key), options: options)
        try db.execute("CREATE TABLE t(v); INSERT INTO t VALUES (1)")
        db.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        // In a child, with glibc's heap checks on: a write past a buffer would abort it.
        let child = try ChildProcess(testHelperPath, ["wrong-reserve", path],
                                     environment: ["DBCRYPT_TEST_KEY": key, "MALLOC_CHECK_": "3", "MALLOC_PERTURB_": "165"],
                                     standardError: .discarded)
        let printed = child.finish().stdout
        let process = child.process

        XCTAssertEqual(process.terminationReason, .exit, "the child crashed: \(printed)")
        XCTAssertEqual(process.terminationStatus, 0, printed)
        let lines = printed.split(separator: "\n").filter { $0 != "done" }
        XCTAssertEqual(lines.count, 3, printed)
        for line in lines { XCTAssertTrue(line.contains("refused"), printed) }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
        XCTAssertEqual(try Database(path: path, key: .passphrase(key)).fetchScalar(Int.self, "SELECT v FROM t"), 1)
    }
}

/// Messages collected from many threads.
final class ErrorLog: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    func append(_ message: String) { lock.lock(); messages.append(message); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return messages }
}
