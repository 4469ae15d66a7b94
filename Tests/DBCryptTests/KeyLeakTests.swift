import Foundation
import XCTest
@testable import DBCrypt

/// A key never appears in what the library produces: the SQL it runs (seen
/// through the trace hook, from the first statement on), its error messages,
/// or the descriptions of its values.
final class KeyLeakTests: XCTestCase {
    let passphrase = "CANARY-passphrase-4c1d"
    let newPassphrase = "CANARY-new-passphrase-77e0"
    let rawBytes: [UInt8] = Array(0xA0..<0xC0)

    /// Every form a key could leak in.
    private var secrets: [String] {
        let hex = rawBytes.map { String(format: "%02x", $0) }.joined()
        return [passphrase, newPassphrase, hex, hex.uppercased(), String(hex.prefix(16)), String(hex.uppercased().prefix(16))]
    }

    func testKeysAppearInNoSQLErrorOrDescription() async throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("leak.db").path
        let rawPath = dir.appendingPathComponent("raw.db").path
        let plainPath = dir.appendingPathComponent("plain.db").path
        let traced = TracedSQL()
        var options = Database.Options()
        options.trace = { traced.append($0) }
        options.journalMode = .wal
        var produced: [String] = []

        let key = DatabaseKey.passphrase(passphrase)
        let raw = try DatabaseKey(rawKey: rawBytes)
        produced += [key.description, key.debugDescription, raw.description, String(reflecting: raw)]

        let db = try Database(path: path, key: key, options: options)
        try db.execute("CREATE TABLE t(x TEXT)")
        try db.execute("INSERT INTO t VALUES (?)", ["value"])
        produced += try db.fetchAll("SELECT * FROM t").map(\.description)
        try db.changeKey(to: .passphrase(newPassphrase))
        produced.append("\(db.cipher!)")
        db.close()

        let rawDB = try Database(path: rawPath, key: raw, options: options)
        try rawDB.execute("CREATE TABLE t(x)")
        try rawDB.changeKey(to: key)
        rawDB.close()

        try Database(path: plainPath, options: options).execute("CREATE TABLE t(x)")

        let queue = try DatabaseQueue(path: path, key: .passphrase(newPassphrase), options: options)
        try await queue.write { db in try db.execute("INSERT INTO t VALUES ('queued')") }
        try queue.close()

        let failures: [() throws -> Void] = [
            { _ = try Database(path: path, key: key, options: options) },
            { _ = try Database(path: path, key: raw, options: options) },
            { _ = try Database(path: plainPath, key: key, options: options) },
            { _ = try Database(path: path, options: options) },
            { _ = try Database(path: dir.path, key: key, options: options) },
            { _ = try DatabaseKey(rawKey: self.rawBytes.dropLast()) },
            { _ = try DatabaseKey(sqlcipherRawKey: "x'" + self.rawBytes.map { String(format: "%02x", $0) }.joined() + "zz'") },
            { try Database(path: plainPath, options: options).changeKey(to: key) },
        ]
        for fail in failures {
            XCTAssertThrowsError(try fail()) { error in
                produced += ["\(error)", String(reflecting: error), error.localizedDescription]
            }
        }

        XCTAssertFalse(traced.all.isEmpty, "the trace hook saw no SQL: this test would prove nothing")
        XCTAssertTrue(traced.all.contains("INSERT INTO t VALUES (?)"))
        XCTAssertEqual(produced.count, 4 + 1 + 1 + 3 * failures.count)
        for text in traced.all + produced {
            for secret in secrets {
                XCTAssertFalse(text.contains(secret), "a key leaked into: \(text.prefix(200))")
            }
        }
    }
}

/// SQL texts collected from the trace hook, from any thread.
private final class TracedSQL: @unchecked Sendable {
    private let lock = NSLock()
    private var texts: [String] = []
    func append(_ text: String) { lock.lock(); texts.append(text); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return texts }
}
