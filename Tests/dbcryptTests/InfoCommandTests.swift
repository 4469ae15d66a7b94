import DBCrypt
import Foundation
import XCTest

/// `dbcrypt info`.
final class InfoCommandTests: XCTestCase {
    func testDescribesAnEncryptedDatabaseAsJSON() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        try DatabaseEncryption.migrateInPlace(path, key: testKey)
        let run = try dbcrypt(["info", path, "--key-env", "KEY", "--json"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 0, run.stderr)
        let info = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(info["format"] as? String, "sqlcipher4")
        XCTAssertEqual(info["cipher_page_size"] as? Int, 4096)
        XCTAssertEqual(info["kdf_iter"] as? Int, 256_000)
        XCTAssertEqual(info["user_version"] as? Int, 3)
        XCTAssertEqual(info["sqlcipher"] as? String, try CipherInfo.linked().cipherVersion)
        XCTAssertEqual(info["tables"] as? [String: Int], ["author": 2, "note": 200])
        XCTAssertGreaterThan(info["page_count"] as? Int ?? 0, 1)
    }

    func testDescribesPlaintextAndUnkeyedFiles() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        let plain = try dbcrypt(["info", path])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertTrue(plain.stdout.contains("format: plaintext"), plain.stdout)
        XCTAssertTrue(plain.stdout.contains("note: 200 rows"), plain.stdout)

        try DatabaseEncryption.migrateInPlace(path, key: testKey)
        let unkeyed = try dbcrypt(["info", path])
        XCTAssertEqual(unkeyed.status, 0, unkeyed.stderr)
        XCTAssertTrue(unkeyed.stdout.contains("encrypted or not a database"), unkeyed.stdout)
        let wrong = try dbcrypt(["info", path, "--key-env", "OTHER"], environment: keyEnvironment)
        XCTAssertEqual(wrong.status, 3)
    }
}
