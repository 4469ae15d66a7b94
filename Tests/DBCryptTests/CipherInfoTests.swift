import XCTest
@testable import DBCrypt

/// What the linked SQLCipher is and supports, detected rather than assumed.
final class CipherInfoTests: XCTestCase {
    func testLinkedLibraryIsSQLCipher() throws {
        let info = try CipherInfo.linked()
        XCTAssertTrue(info.cipherVersion.first?.isNumber == true, info.cipherVersion)
        XCTAssertFalse(info.sqliteVersion.isEmpty)
        XCTAssertFalse(info.provider.isEmpty)
        XCTAssertTrue(info.supports(.pageSize))
        XCTAssertTrue(info.supports(.kdfIterations))
    }

    func testDebianSQLCipher3GetsDBCryptsProviderAndBothFormats() throws {
        let info = try CipherInfo.linked()
        try skipUnless(info.cipherVersion.hasPrefix("3.4."), "the linked SQLCipher is \(info.cipherVersion)")
        XCTAssertTrue(info.usesDBCryptProvider)
        XCTAssertEqual(info.provider, "dbcrypt-openssl")
        XCTAssertEqual(info.formats, [.sqlcipher3, .sqlcipher4])
        XCTAssertTrue(info.providerVersion?.hasPrefix("OpenSSL") == true, "\(info.providerVersion ?? "nil")")
        XCTAssertFalse(info.supports(.hmacAlgorithm))
        XCTAssertFalse(info.supports(.kdfAlgorithm))
        XCTAssertFalse(info.supports(.compatibility))
    }

    func testSQLCipher4ChoosesTheFormatWithItsOwnPragmas() throws {
        let info = try CipherInfo.linked()
        try skipIf(info.usesDBCryptProvider, "SQLCipher \(info.cipherVersion) chooses the format through DBCrypt's provider")
        XCTAssertEqual(info.formats, [.sqlcipher3, .sqlcipher4])
        XCTAssertNotEqual(info.provider, "dbcrypt-openssl")
        let dir = try makeTemporaryDirectory(self)
        for (format, hash) in [(CipherSettings.sqlcipher3, "SHA1"), (.sqlcipher4, "SHA512")] {
            var options = Database.Options()
            options.cipher = format
            let db = try Database(path: dir.appendingPathComponent("\(hash).db").path, key: .passphrase("x"), options: options)
            XCTAssertEqual(try db.connection.firstValue("PRAGMA cipher_hmac_algorithm"), .text("HMAC_" + hash))
            XCTAssertEqual(try db.connection.firstValue("PRAGMA cipher_kdf_algorithm"), .text("PBKDF2_HMAC_" + hash))
            XCTAssertEqual(try db.connection.integerValue("PRAGMA cipher_page_size"), format.effectivePageSize)
        }
    }

    /// Other hashes and no HMAC: SQLCipher's own pragmas on 4.x (the
    /// engine's shell reads the file with them); a clear refusal on 3.4.1,
    /// whose files with such settings the page reader reads.
    func testCustomHashesWhereTheEngineHasThem() throws {
        let info = try CipherInfo.linked()
        let dir = try makeTemporaryDirectory(self)
        for custom in [CipherSettings(.sqlcipher4, kdfIterations: 1000, kdfHash: .sha256, hmacHash: .sha256),
                       CipherSettings(.sqlcipher4, kdfIterations: 1000, usesHMAC: false)] {
            var options = Database.Options()
            options.cipher = custom
            let path = dir.appendingPathComponent("\(custom.usesHMAC).db").path
            guard info.supports(.hmacAlgorithm) else {
                XCTAssertThrowsError(try Database(path: path, key: .passphrase("x"), options: options)) { error in
                    guard case .unsupportedCipherSetting? = error as? DatabaseError else { return XCTFail("\(error)") }
                }
                XCTAssertFalse(FileManager.default.fileExists(atPath: path))
                continue
            }
            let db = try Database(path: path, key: .passphrase("x"), options: options)
            try db.execute("CREATE TABLE t(v); INSERT INTO t VALUES ('custom')")
            XCTAssertEqual(db.cipher, custom)
            db.close()
            XCTAssertEqual(try Database(path: path, key: .passphrase("x"), options: options).fetchScalar(String.self, "SELECT v FROM t"), "custom")
            let pragmas = custom.usesHMAC ? "PRAGMA cipher_kdf_algorithm = PBKDF2_HMAC_SHA256;\nPRAGMA cipher_hmac_algorithm = HMAC_SHA256;"
                : "PRAGMA cipher_use_hmac = OFF;"
            XCTAssertEqual(try runSQLCipherShell(path, "PRAGMA key = 'x';\nPRAGMA kdf_iter = 1000;\n\(pragmas)\nSELECT v FROM t;\n", defaults: .own),
                           "custom\n")
        }
    }

    func testSupportMatchesWhatAKeyedConnectionAnswers() throws {
        let info = try CipherInfo.linked()
        let db = try Database.inMemory(key: .passphrase("x"))
        for setting in CipherPragma.allCases {
            let answer = try db.connection.firstValue("PRAGMA \(setting.rawValue)")
            XCTAssertEqual(answer != nil, info.supports(setting), setting.rawValue)
        }
        // 3.4.1 silently accepts a pragma it does not know: why support is detected.
        if !info.supports(.hmacAlgorithm) {
            XCTAssertNoThrow(try db.execute("PRAGMA cipher_hmac_algorithm = HMAC_SHA512"))
        }
    }

    func testInvalidPageSizeIsRefusedBeforeTouchingTheFile() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("p.db").path
        var options = Database.Options()
        options.cipher.pageSize = 3000
        XCTAssertThrowsError(try Database(path: path, key: .passphrase("k"), options: options)) { error in
            guard case .invalidSetting(name: "cipher_page_size", _)? = error as? CipherError else {
                return XCTFail("got \(error)")
            }
        }
        XCTAssertEqual(try FileFormat.detect(at: path), .missing)
    }

    func testPageSizeSettingChangesTheFile() throws {
        let dir = try makeTemporaryDirectory(self)
        var sizes: [Int] = []
        for pageSize in [1024, 4096] {
            let path = dir.appendingPathComponent("\(pageSize).db").path
            var options = Database.Options()
            options.cipher = CipherSettings(.sqlcipher3, pageSize: pageSize)
            let db = try Database(path: path, key: .passphrase("k"), options: options)
            try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
            db.close()
            sizes.append(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int)
        }
        XCTAssertEqual(sizes, [2 * 1024, 2 * 4096])
    }
}
