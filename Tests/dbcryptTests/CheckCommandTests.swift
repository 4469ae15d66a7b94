import DBCrypt
import Foundation
import XCTest

/// `dbcrypt check`: its exit status says what it found.
final class CheckCommandTests: XCTestCase {
    func testIntactDatabasesExitZero() throws {
        let dir = try makeTemporaryDirectory(self)
        let plain = dir.appendingPathComponent("plain.db").path
        try makePlaintextDatabase(plain)
        XCTAssertEqual(try dbcrypt(["check", plain]).status, 0)
        let encrypted = dir.appendingPathComponent("encrypted.db").path
        try DatabaseEncryption.encrypt(plain, to: encrypted, key: testKey)
        let run = try dbcrypt(["check", encrypted, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.hasPrefix("ok:"), run.stdout)
        // SQLCipher 4.x's own check of every page runs beside the page reader's.
        let has = try CipherInfo.linked().hasCipherIntegrityCheck
        XCTAssertEqual(run.stdout.contains("SQLCipher's cipher_integrity_check passed"), has, run.stdout)
        let json = try dbcrypt(["check", encrypted, "--key-env", "KEY", "--json"], environment: keyEnvironment)
        XCTAssertTrue(json.stdout.contains(#""cipherIntegrityCheck":\#(has)"#), json.stdout)
    }

    /// Pages with no HMAC (SQLCipher 1's settings) decrypt, but nothing
    /// vouches that they were not altered: check says so, and never calls
    /// them intact.
    func testPagesWithoutAnHMACAreNotCalledIntact() throws {
        let dir = try makeTemporaryDirectory(self)
        let plain = dir.appendingPathComponent("plain.db").path
        try makePlaintextDatabase(plain)
        let encrypted = dir.appendingPathComponent("sqlcipher1.db").path
        do {
            try DatabaseEncryption.encrypt(plain, to: encrypted, key: testKey, cipher: .sqlcipher1)
        } catch DatabaseError.unsupportedCipherSetting(let name, let version) {
            return try skipUnless(false, "SQLCipher \(version) cannot write pages without an HMAC (\(name))")
        }
        let run = try dbcrypt(["check", encrypted, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("carry no HMAC, so whether they were altered cannot be verified"), run.stdout)
        XCTAssertFalse(run.stdout.contains("intact"), run.stdout)
        // Nor does recover call them authentic.
        let recovered = try dbcrypt(["recover", encrypted, "-o", dir.appendingPathComponent("out.db").path, "--key-env", "KEY"],
                                    environment: keyEnvironment)
        XCTAssertEqual(recovered.status, 0, recovered.stderr)
        XCTAssertTrue(recovered.stdout.contains("pages decrypted; SQLCipher 1 pages carry no HMAC"), recovered.stdout)
        XCTAssertFalse(recovered.stdout.contains("authenticated"), recovered.stdout)
    }

    func testWrongKeyGarbageAndEmptyFilesExitThree() throws {
        let dir = try makeTemporaryDirectory(self)
        let encrypted = dir.appendingPathComponent("encrypted.db").path
        try makePlaintextDatabase(encrypted)
        try DatabaseEncryption.migrateInPlace(encrypted, key: testKey)
        let garbage = dir.appendingPathComponent("garbage.db").path
        try Data((0..<9000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }).write(to: URL(fileURLWithPath: garbage))
        let empty = dir.appendingPathComponent("empty.db").path
        XCTAssertTrue(FileManager.default.createFile(atPath: empty, contents: Data()))
        for (path, key) in [(encrypted, "OTHER"), (garbage, "KEY"), (empty, "KEY")] {
            let before = try contents(path)
            let run = try dbcrypt(["check", path, "--key-env", key], environment: keyEnvironment)
            XCTAssertEqual(run.status, 3, "\(path): \(run.stderr)")
            XCTAssertEqual(try contents(path), before)
        }
    }

    func testTruncatedEncryptedFileIsReportedAsDamage() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path, rows: 3000)
        try DatabaseEncryption.migrateInPlace(path, key: testKey)
        let full = try contents(path)
        try full.prefix(full.count / 2).write(to: URL(fileURLWithPath: path))
        let run = try dbcrypt(["check", path, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 4, run.stdout + run.stderr)
        XCTAssertTrue(run.stderr.contains("is damaged"), run.stderr)
    }

    func testCorruptedPageInsideAnEncryptedFileIsReportedAsDamage() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path, rows: 3000)
        try DatabaseEncryption.migrateInPlace(path, key: testKey)
        var bytes = try contents(path)
        bytes[4096 * 3 + 100] ^= 0xFF   // one byte of the fourth page: its HMAC no longer matches
        try bytes.write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(try dbcrypt(["check", path, "--key-env", "KEY"], environment: keyEnvironment).status, 4)
    }

    /// A change in page 1 (past the salt) is damage named as page 1, not a
    /// wrong key: page 2 vouches for the key.
    func testADamagedFirstPageIsNamedNotTakenForAWrongKey() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("app.db").path
        try makePlaintextDatabase(path, rows: 3000)
        try DatabaseEncryption.migrateInPlace(path, key: testKey)
        var bytes = try contents(path)
        bytes[1000] ^= 0x20
        try bytes.write(to: URL(fileURLWithPath: path))
        let run = try dbcrypt(["check", path, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 4, run.stderr)
        XCTAssertEqual(run.stdout, "page 1 (bytes 0-4095): HMAC mismatch\n")
    }

    /// Random single-byte changes anywhere past the salt: each exits 4 and
    /// names the page it is in, in text and in JSON.
    func testEveryChangedByteExitsFourNamingItsPage() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("app.db").path
        try makePlaintextDatabase(path, rows: 3000)
        try DatabaseEncryption.migrateInPlace(path, key: testKey)
        let original = try contents(path)
        var generator = SystemRandomNumberGenerator()
        for round in 0..<12 {
            var bytes = original
            let offset = Int.random(in: 16..<bytes.count, using: &generator)
            bytes[offset] ^= UInt8.random(in: 1...255, using: &generator)
            try bytes.write(to: URL(fileURLWithPath: path))
            let page = offset / 4096 + 1
            let json = round % 2 == 1
            let run = try dbcrypt(["check", path, "--key-env", "KEY"] + (json ? ["--json"] : []), environment: keyEnvironment)
            XCTAssertEqual(run.status, 4, "byte \(offset): \(run.stderr)")
            if json {
                XCTAssertTrue(run.stdout.contains(#""damaged":[{"page":\#(page),"file":"database","offset":\#((page - 1) * 4096),"length":4096,"kind":"HMAC mismatch"}]"#),
                              run.stdout)
            } else {
                XCTAssertEqual(run.stdout, "page \(page) (bytes \((page - 1) * 4096)-\(page * 4096 - 1)): HMAC mismatch\n")
            }
        }
    }
}
