import Foundation
import XCTest
@testable import DBCrypt

/// Keys: passphrases and raw keys open what they created, and a key never
/// shows itself in a description.
final class DatabaseKeyTests: XCTestCase {
    let rawBytes: [UInt8] = (0..<32).map { UInt8($0 * 7 + 1) }
    let salt: [UInt8] = (0..<16).map { UInt8(200 - $0) }

    func testRawKeyCreatesAndReopensADatabase() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("raw.db").path
        let key = try DatabaseKey(rawKey: rawBytes)
        XCTAssertEqual(key.kind, .raw)
        let db = try Database(path: path, key: key)
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('raw')")
        db.close()
        XCTAssertNotEqual(try fileHeader(path), SQLiteHeader.magic)
        XCTAssertEqual(try Database(path: path, key: key).fetchScalar(String.self, "SELECT x FROM t"), "raw")
        // The same key written in SQLCipher's text form opens it too.
        let hex = Hex.encode(rawBytes)
        XCTAssertEqual(try Database(path: path, key: DatabaseKey(sqlcipherRawKey: "x'\(hex)'"))
            .fetchScalar(String.self, "SELECT x FROM t"), "raw")
        // Another raw key, or the hex digits taken as a passphrase, does not.
        var other = rawBytes
        other[0] ^= 1
        XCTAssertThrowsError(try Database(path: path, key: DatabaseKey(rawKey: other))) { error in
            XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: path))
        }
        XCTAssertThrowsError(try Database(path: path, key: .passphrase(hex)))
    }

    /// As in SQLCipher, a passphrase spelled `x'<hex>'` is that raw key: a
    /// pool, whose readers open with a key derived once, opens with it too
    /// (derived as a passphrase, it would be another key).
    func testAPassphraseSpelledAsARawKeyIsThatRawKey() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("spelled.db").path
        let hex = Hex.encode(rawBytes)
        let spelled = DatabaseKey.passphrase("x'\(hex)'")
        XCTAssertEqual(spelled.kind, .raw)
        XCTAssertEqual(DatabaseKey.passphrase("X'\(hex.uppercased())\(Hex.encode(salt))'").kind, .rawWithSalt)
        XCTAssertEqual(DatabaseKey.passphrase("x'\(hex)").kind, .passphrase)
        let pool = try DatabasePool(path: path, key: spelled)
        try pool.write { db in try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        XCTAssertEqual(try pool.read { db in try db.fetchScalar(Int.self, "SELECT x FROM t") }, 1)
        try pool.close()
        XCTAssertEqual(try Database(path: path, key: DatabaseKey(rawKey: rawBytes)).fetchScalar(Int.self, "SELECT x FROM t"), 1)
    }

    func testRawKeyWithSaltUsesThatSalt() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("salted.db").path
        let key = try DatabaseKey(rawKey: rawBytes, salt: salt)
        XCTAssertEqual(key.kind, .rawWithSalt)
        let db = try Database(path: path, key: key)
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        db.close()
        // SQLCipher writes the salt as the file's first 16 bytes.
        XCTAssertEqual(try fileHeader(path), salt)
        XCTAssertEqual(try Database(path: path, key: key).fetchScalar(Int.self, "SELECT x FROM t"), 1)
        XCTAssertEqual(try Database(path: path, key: DatabaseKey(rawKey: rawBytes)).fetchScalar(Int.self, "SELECT x FROM t"), 1)
    }

    func testPassphraseBytesNeedNotBeText() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("bytes.db").path
        let bytes: [UInt8] = [0xFF, 0x00, 0xFE, 0x01, 0x80]
        try Database(path: path, key: .passphrase(bytes: bytes)).execute("CREATE TABLE t(x)")
        XCTAssertNoThrow(try Database(path: path, key: .passphrase(bytes: bytes)))
        XCTAssertThrowsError(try Database(path: path, key: .passphrase(bytes: bytes.dropLast())))
    }

    func testMalformedRawKeysAreRefusedWithoutEchoingThem() {
        let cases: [() throws -> DatabaseKey] = [
            { try DatabaseKey(rawKey: [UInt8](repeating: 0xAB, count: 31)) },
            { try DatabaseKey(rawKey: self.rawBytes, salt: [1, 2, 3]) },
            { try DatabaseKey(sqlcipherRawKey: "x'" + String(repeating: "ab", count: 31) + "'") },
            { try DatabaseKey(sqlcipherRawKey: "x'" + String(repeating: "zz", count: 32) + "'") },
            { try DatabaseKey(sqlcipherRawKey: String(repeating: "ab", count: 32)) },
        ]
        for make in cases {
            XCTAssertThrowsError(try make()) { error in
                guard case .invalidKey? = error as? CipherError else { return XCTFail("got \(error)") }
                XCTAssertFalse("\(error)".contains("abab"))
                XCTAssertFalse("\(error)".contains("zzzz"))
            }
        }
    }

    func testKeyDescriptionsAreRedacted() throws {
        let secret = "hunter2-very-secret"
        let keys = [DatabaseKey.passphrase(secret), try DatabaseKey(rawKey: rawBytes, salt: salt)]
        let hex = rawBytes.map { String(format: "%02X", $0) }.joined()
        for key in keys {
            var dumped = ""
            dump(key, to: &dumped)
            for text in [key.description, key.debugDescription, "\(key)", String(reflecting: key), dumped,
                         "\([key])", "\(Optional(key) as Any)"] {
                XCTAssertFalse(text.contains(secret), text)
                XCTAssertFalse(text.uppercased().contains(hex.prefix(16)), text)
                XCTAssertFalse(text.contains("x'"), text)
            }
            XCTAssertEqual(key.description, "<redacted>")
        }
    }
}
