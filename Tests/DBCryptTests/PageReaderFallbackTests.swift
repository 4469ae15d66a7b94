import Foundation
import SQLCipherFormat
import TestFixtures
import XCTest
@testable import DBCrypt

/// A decryption falls back on the page reader it is given for a file the
/// linked SQLCipher cannot open, and says which reader decrypted.
final class PageReaderFallbackTests: XCTestCase {
    /// An encrypted database in the standard layout, with one note, in a new directory.
    private func makeStandardDatabase() throws -> (dir: URL, path: String) {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("standard.db").path
        let db = try makeDatabase(path, key: TestKeys.key)
        try db.execute("CREATE TABLE note(title TEXT); INSERT INTO note VALUES ('in a shared container')")
        db.close()
        return (dir, path)
    }

    /// Every plaintext header size (16 to 96 bytes) leaves a file that is
    /// not taken for a plaintext database, and decrypts given its salt (the
    /// page reader finds the size). At 96 bytes, 72-91 are in the clear and
    /// zero: only the b-tree header from byte 100, encrypted, tells it from
    /// SQLite's page 1.
    func testEveryPlaintextHeaderSizeIsAnEncryptedFile() throws {
        let (dir, standard) = try makeStandardDatabase()
        let file = try EncryptedDatabaseFile(path: standard, key: TestKeys.key)
        var options = ExportOptions()
        options.pageReader = EncryptedDatabaseFile.self
        for size in stride(from: 16, through: 96, by: 16) {
            let shared = dir.appendingPathComponent("shared-\(size).db").path
            _ = try file.convertHeader(to: shared, plaintextHeaderSize: size)
            XCTAssertEqual(try FileFormat.detect(at: shared), .notPlaintext, "\(size)")
            XCTAssertTrue(EncryptedDatabaseFile.hasPlaintextHeader(at: shared), "\(size)")
            let plain = dir.appendingPathComponent("plain-\(size).db").path
            let settings = CipherSettings(.sqlcipher4, salt: file.salt)
            _ = try DatabaseEncryption.decrypt(shared, key: TestKeys.key, cipher: settings, to: plain, options: options)
            let copy = try Database(path: plain)
            XCTAssertEqual(try copy.fetchScalar(String.self, "SELECT title FROM note"), "in a shared container", "\(size)")
            copy.close()
        }
    }

    func testAPlaintextHeaderFileDecryptsWhereverTheLinkedSQLCipherCannot() throws {
        let (dir, standard) = try makeStandardDatabase()
        let shared = dir.appendingPathComponent("shared.db").path
        let file = try EncryptedDatabaseFile(path: standard, key: TestKeys.key)
        _ = try file.convertHeader(to: shared, plaintextHeaderSize: 32)
        let settings = CipherSettings(.sqlcipher4, salt: file.salt)

        var options = ExportOptions()
        options.pageReader = EncryptedDatabaseFile.self
        let plain = dir.appendingPathComponent("plain.db").path
        let reader = try DatabaseEncryption.decrypt(shared, key: TestKeys.key, cipher: settings, to: plain, options: options)
        let linkedReadsHeaders = try CipherInfo.linked().supports(.plaintextHeaderSize)
        XCTAssertEqual(reader == .linkedSQLCipher, linkedReadsHeaders, "\(reader)")
        let copy = try Database(path: plain)
        XCTAssertEqual(try copy.fetchScalar(String.self, "SELECT title FROM note"), "in a shared container")
        copy.close()

        // Without a page reader, an engine that cannot read the header refuses; a wrong key is the linked one's error.
        if !linkedReadsHeaders {
            XCTAssertThrowsError(try DatabaseEncryption.decrypt(shared, key: TestKeys.key, cipher: settings,
                                                                to: dir.appendingPathComponent("none.db").path))
        }
        XCTAssertThrowsError(try DatabaseEncryption.decrypt(shared, key: TestKeys.other, cipher: settings,
                                                            to: dir.appendingPathComponent("wrong.db").path, options: options)) { error in
            XCTAssertEqual((error as? any DBCryptError)?.category, .wrongKey, "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("wrong.db").path))
    }
}
