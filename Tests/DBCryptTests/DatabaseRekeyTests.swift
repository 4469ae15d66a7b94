import XCTest
@testable import DBCrypt

/// Changing the key of an encrypted database; refusing a plaintext one.
final class DatabaseRekeyTests: XCTestCase {
    func testChangeKeyReencryptsTheFile() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("rekey.db").path
        let old = DatabaseKey.named("old key"), new = DatabaseKey.named("new key")
        var options = Database.Options()
        options.cipher = .sqlcipher3   // for the shell below
        let db = try Database(path: path, key: old, options: options)
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('kept')")
        try db.changeKey(to: new)
        XCTAssertEqual(try db.fetchScalar(String.self, "SELECT x FROM t"), "kept")
        db.close()
        XCTAssertThrowsError(try Database(path: path, key: old)) { error in
            XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: path))
        }
        XCTAssertEqual(try Database(path: path, key: new).fetchScalar(String.self, "SELECT x FROM t"), "kept")
        // To a raw key, and the shell agrees.
        let raw = try DatabaseKey(rawKey: [UInt8](repeating: 0x5A, count: 32))
        try Database(path: path, key: new).changeKey(to: raw)
        XCTAssertEqual(try runSQLCipherShell(path, "PRAGMA key = \"x'\(String(repeating: "5A", count: 32))'\";\nSELECT x FROM t;\n"), "kept\n")
    }

    func testChangeKeyRefusesAPlaintextDatabase() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("plain.db").path
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('plain')")
        XCTAssertThrowsError(try db.changeKey(to: .named("k"))) { error in
            XCTAssertEqual(error as? DatabaseError, .notEncrypted(path: path))
            XCTAssertTrue("\(error)".contains("migrate it to an encrypted database"))
        }
        db.close()
        XCTAssertEqual(try fileHeader(path), SQLiteHeader.magic)
    }

    func testChangeKeyRefusesAnEmptyKey() throws {
        let db = try Database.inMemory(key: .named("k"))
        XCTAssertThrowsError(try db.changeKey(to: .passphrase(""))) { error in
            guard case .invalidKey? = error as? CipherError else { return XCTFail("got \(error)") }
        }
    }
}
