import Foundation
import XCTest
@testable import DBCrypt

/// Databases whose first 32 bytes stay in the clear, as iOS apps keep them
/// in a shared container: SQLCipher 4.x opens and creates them natively,
/// given the salt (which such a file does not hold) with the key. Debian
/// 12's 3.4.1 has no such setting: there DBCrypt says so, and the page
/// reader (`dbcrypt check`, `decrypt`, `header`) reads them instead.
final class PlaintextHeaderTests: XCTestCase {
    let passphrase = "plaintext header passphrase"
    let salt: [UInt8] = Array(0x10..<0x20)
    var saltHex: String { salt.map { String(format: "%02x", $0) }.joined() }
    var headerSettings: CipherSettings { CipherSettings(.sqlcipher4, plaintextHeaderSize: 32, salt: salt) }

    private var engineHasPlaintextHeaders: Bool {
        get throws { try CipherInfo.linked().supports(.plaintextHeaderSize) }
    }
    private var engine: String {
        get throws { "SQLCipher \(try CipherInfo.linked().cipherVersion)" }
    }

    /// A database made with a 32-byte plaintext header and a passphrase.
    private func makeHeaderDatabase() throws -> String {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("shared.db").path
        var options = Database.Options()
        options.cipher = headerSettings
        let db = try Database(path: path, key: .passphrase(passphrase), options: options)
        try db.execute("CREATE TABLE note(title TEXT); INSERT INTO note VALUES ('in a shared container')")
        db.close()
        return path
    }

    func testCreatedAndReopenedWithTheSaltBesideAPassphrase() throws {
        let engine = try self.engine
        try skipUnless(try engineHasPlaintextHeaders, "\(engine) has no plaintext header setting (testAnEngineWithoutTheSettingSaysSo runs instead)")
        let path = try makeHeaderDatabase()
        let start = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(16)
        XCTAssertEqual(Array(start), SQLiteHeader.magic)
        XCTAssertEqual(try FileFormat.detect(at: path), .notPlaintext, "a plaintext header with encrypted pages is not a plaintext database")

        // The header's size is found in the file; the salt is given.
        var options = Database.Options()
        options.cipher = CipherSettings(.sqlcipher4, salt: salt)
        let db = try Database(path: path, key: .passphrase(passphrase), options: options)
        XCTAssertEqual(try db.fetchScalar(String.self, "SELECT title FROM note"), "in a shared container")
        XCTAssertEqual(db.cipher?.plaintextHeaderSize, 32)
        db.close()

        // A pool derives the key once, with that salt.
        let pool = try DatabasePool(path: path, key: .passphrase(passphrase), options: options)
        XCTAssertEqual(try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM note") }, 1)
        XCTAssertEqual(pool.readerKeyKind, .rawWithSalt)
        try pool.close()
    }

    /// A header of another size than iOS's is found as the page reader
    /// finds it: each size a connection keeps is tried, 32 first, with the
    /// key derived once.
    func testAHeaderOfAnySizeOpensWithTheSaltAlone() throws {
        let engine = try self.engine
        try skipUnless(try engineHasPlaintextHeaders, "\(engine) has no plaintext header setting (testAnEngineWithoutTheSettingSaysSo runs instead)")
        let dir = try makeTemporaryDirectory(self)
        for size in [16, 48, 80] {
            let path = dir.appendingPathComponent("shared-\(size).db").path
            var options = Database.Options()
            options.cipher = CipherSettings(.sqlcipher4, plaintextHeaderSize: size, salt: salt)
            let made = try Database(path: path, key: .passphrase(passphrase), options: options)
            try made.execute("CREATE TABLE note(title TEXT); INSERT INTO note VALUES ('header of \(size)')")
            made.close()

            options.cipher = CipherSettings(.sqlcipher4, salt: salt)
            let db = try Database(path: path, key: .passphrase(passphrase), options: options)
            XCTAssertEqual(try db.fetchScalar(String.self, "SELECT title FROM note"), "header of \(size)")
            XCTAssertEqual(db.cipher?.plaintextHeaderSize, size)
            db.close()
            XCTAssertThrowsError(try Database(path: path, key: .passphrase("not it"), options: options)) { error in
                XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: path))
            }
        }
        // Without an HMAC, another size can decrypt page 1 to a header SQLite
        // accepts (CBC garbles only the blocks the sizes disagree on): no
        // other size is tried, and a header of another size than 32 is given.
        let library = try CipherInfo.linked()
        let guessed = CipherSettings(.sqlcipher4, plaintextHeaderSize: 32, salt: salt, usesHMAC: false)
        XCTAssertEqual(guessed.toTry(on: library, otherFormat: false, otherHeaderSizes: true).map(\.plaintextHeaderSize), [32])
        var authenticated = guessed
        authenticated.usesHMAC = true
        XCTAssertEqual(authenticated.toTry(on: library, otherFormat: false, otherHeaderSizes: true).map(\.plaintextHeaderSize), [32, 16, 48, 64, 80])
        let path = dir.appendingPathComponent("shared-no-hmac.db").path
        var options = Database.Options()
        options.cipher = CipherSettings(.sqlcipher4, plaintextHeaderSize: 48, salt: salt, usesHMAC: false)
        let made = try Database(path: path, key: .passphrase(passphrase), options: options)
        try made.execute("CREATE TABLE note(title TEXT)")
        made.close()
        options.tryOtherFormat = false
        let db = try Database(path: path, key: .passphrase(passphrase), options: options)
        XCTAssertEqual(db.cipher?.plaintextHeaderSize, 48)
        db.close()
    }

    func testWithoutItsSaltItIsAClearErrorAndNoFileChanges() throws {
        let engine = try self.engine
        try skipUnless(try engineHasPlaintextHeaders, "\(engine) has no plaintext header setting (testAnEngineWithoutTheSettingSaysSo runs instead)")
        let path = try makeHeaderDatabase()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try Database(path: path, key: .passphrase(passphrase))) { error in
            guard case .invalidSetting(name: "cipher_salt", let reason)? = error as? CipherError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("CipherSettings.salt"), reason)
        }
        XCTAssertThrowsError(try Database(path: path)) { error in
            XCTAssertEqual(error as? DatabaseError, .keyRequired(path: path))
        }
        var wrongSalt = Database.Options()
        wrongSalt.cipher = CipherSettings(.sqlcipher4, salt: Array(repeating: 7, count: 16))
        XCTAssertThrowsError(try Database(path: path, key: .passphrase(passphrase), options: wrongSalt)) { error in
            XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: path))
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
    }

    /// The engine's own shell reads what DBCrypt wrote, and DBCrypt what
    /// the shell wrote, both with a plaintext header.
    func testTheEnginesShellAndDBCryptReadEachOthersFiles() throws {
        let engine = try self.engine
        try skipUnless(try engineHasPlaintextHeaders && shellIsSQLCipher4, "\(engine) has no plaintext header setting (testAnEngineWithoutTheSettingSaysSo runs instead)")
        let path = try makeHeaderDatabase()
        XCTAssertEqual(try runSQLCipherShell(path, """
            PRAGMA key = '\(passphrase)';
            PRAGMA cipher_plaintext_header_size = 32;
            PRAGMA cipher_salt = "x'\(saltHex)'";
            SELECT title FROM note;
            """, defaults: .own), "in a shared container\n")

        let shellPath = try makeTemporaryDirectory(self).appendingPathComponent("shell.db").path
        try runSQLCipherShell(shellPath, """
            PRAGMA key = '\(passphrase)';
            PRAGMA cipher_plaintext_header_size = 32;
            PRAGMA cipher_salt = "x'\(saltHex)'";
            CREATE TABLE t(x); INSERT INTO t VALUES ('from the shell');
            """, defaults: .own)
        var options = Database.Options()
        options.cipher.salt = salt
        let db = try Database(path: shellPath, key: .passphrase(passphrase), options: options)
        XCTAssertEqual(try db.fetchScalar(String.self, "SELECT x FROM t"), "from the shell")
    }

    /// No routine writes a plaintext-header file whose salt nobody keeps:
    /// encrypting, migrating in place and a pool's new file all refuse
    /// before they touch a file.
    func testNothingIsWrittenWithASaltThatWouldBeLost() throws {
        let dir = try makeTemporaryDirectory(self)
        let plain = dir.appendingPathComponent("plain.db").path
        let db = try Database(path: plain)
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        db.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: plain))
        let unsalted = CipherSettings(.sqlcipher4, plaintextHeaderSize: 32)
        let refusals: [(String, () throws -> Void)] = [
            ("encrypt", { try DatabaseEncryption.encrypt(plain, to: dir.appendingPathComponent("out.db").path, key: .passphrase(self.passphrase), cipher: unsalted) }),
            ("migrateInPlace", { try DatabaseEncryption.migrateInPlace(plain, key: .passphrase(self.passphrase), cipher: unsalted) }),
            ("a pool's new file", {
                var databaseOptions = Database.Options()
                databaseOptions.cipher = unsalted
                _ = try DatabasePool(path: dir.appendingPathComponent("pool.db").path, key: .passphrase(self.passphrase), options: databaseOptions)
            }),
        ]
        let expected = try engineHasPlaintextHeaders ? "cipher_salt" : "cipher_plaintext_header_size"
        for (name, refusal) in refusals {
            XCTAssertThrowsError(try refusal(), name) { error in
                switch error {
                case CipherError.invalidSetting(name: expected, _), DatabaseError.unsupportedCipherSetting(name: expected, _): break
                default: XCTFail("\(name): \(error)")
                }
            }
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: plain)), before)
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasPrefix("plain.db") }
        XCTAssertEqual(left, [], "files left behind")
    }

    /// The `-wal` of a plaintext-header file is authenticated with the
    /// salt given: its commits open, and another database's log is refused.
    func testItsWriteAheadLogIsAuthenticatedWithTheGivenSalt() throws {
        let engine = try self.engine
        try skipUnless(try engineHasPlaintextHeaders, "\(engine) has no plaintext header setting (testAnEngineWithoutTheSettingSaysSo runs instead)")
        let dir = try makeTemporaryDirectory(self)
        var options = Database.Options()
        options.cipher = headerSettings
        options.journalMode = .wal
        func logged(_ name: String, _ value: String, salt: [UInt8]) throws -> String {
            let path = dir.appendingPathComponent(name).path
            var withSalt = options
            withSalt.cipher.salt = salt
            let queue = try DatabaseQueue(path: path, key: .passphrase(passphrase), options: withSalt)
            try queue.write { db in try db.execute("CREATE TABLE t(x)") }
            try queue.write { db in try db.execute("INSERT INTO t VALUES (?)", [value]) }
            try queue.closeWithoutCheckpoint()
            XCTAssertTrue(WriteAheadLogFile.hasFrames(besideDatabaseAt: path), name)
            return path
        }
        let path = try logged("a.db", "logged", salt: salt)
        do {
            // Gone before the next open: a connection of this process makes the log live, and unchecked.
            let db = try Database(path: path, key: .passphrase(passphrase), options: options)
            XCTAssertEqual(try db.fetchScalar(String.self, "SELECT x FROM t"), "logged")
            db.closeWithoutCheckpoint()
        }

        // Another database: the same passphrase, another salt, so another key.
        let other = try logged("b.db", "other", salt: Array(repeating: 0x42, count: 16))
        try FileManager.default.removeItem(atPath: path + "-wal")
        try? FileManager.default.removeItem(atPath: path + "-shm")
        try FileManager.default.copyItem(atPath: other + "-wal", toPath: path + "-wal")
        XCTAssertThrowsError(try Database(path: path, key: .passphrase(passphrase), options: options)) { error in
            XCTAssertEqual(error as? DatabaseError, .writeAheadLogDoesNotDecrypt(path: path))
        }
    }

    func testAnEngineWithoutTheSettingSaysSo() throws {
        let engine = try self.engine
        try skipIf(try engineHasPlaintextHeaders, "\(engine) has plaintext headers (tested above)")
        let path = try makeTemporaryDirectory(self).appendingPathComponent("new.db").path
        var options = Database.Options()
        options.cipher = headerSettings
        XCTAssertThrowsError(try Database(path: path, key: .passphrase(passphrase), options: options)) { error in
            guard case .unsupportedCipherSetting(name: "cipher_plaintext_header_size", _)? = error as? DatabaseError else {
                return XCTFail("\(error)")
            }
        }
    }

    func testInvalidHeaderSizesAndSaltsAreRefused() throws {
        for settings in [CipherSettings(.sqlcipher4, plaintextHeaderSize: 20, salt: salt),
                         CipherSettings(.sqlcipher4, plaintextHeaderSize: 32, salt: [1, 2, 3])] {
            XCTAssertThrowsError(try settings.validate()) { error in
                guard case .invalidSetting? = error as? CipherError else { return XCTFail("\(error)") }
            }
        }
    }
}
