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

        // Through a symbolic link, the file it names: its size, not the link's.
        let link = dir.appendingPathComponent("link.db").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "app.db")
        let linked = try dbcrypt(["info", link, "--key-env", "KEY", "--json"], environment: keyEnvironment)
        let linkedInfo = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(linked.stdout.utf8)) as? [String: Any])
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        XCTAssertEqual(linkedInfo["size"] as? Int, size)
        XCTAssertEqual(info["size"] as? Int, size)
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

    /// A damaged first page, which SQLCipher refuses as it refuses a wrong
    /// key, is named damaged (status 4), not "readable by DBCrypt's page
    /// reader only".
    func testADamagedFileIsNamedDamaged() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        try DatabaseEncryption.migrateInPlace(path, key: testKey)
        let file = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try file.seek(toOffset: 200)
        let byte = try XCTUnwrap(try file.read(upToCount: 1)).first!
        try file.seek(toOffset: 200)
        try file.write(contentsOf: [byte ^ 0x40])
        try file.close()
        let run = try dbcrypt(["info", path, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 4, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.contains("damaged: page 1"), run.stdout)
        XCTAssertFalse(run.stdout.contains("page reader only"), run.stdout)
    }
}
