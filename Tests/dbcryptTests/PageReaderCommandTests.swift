import DBCrypt
import Foundation
import XCTest

/// The commands that go through DBCrypt's page reader: files the linked
/// SQLCipher cannot open, plaintext headers, and recovery. Keyed with real
/// passphrases: which settings open a file, and the salt a plaintext header
/// hides, are matters of key derivation.
final class PageReaderCommandTests: XCTestCase {
    private func sqlcipher419File(_ pragmas: [String]) throws -> String {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("peer.db").path
        try runPeer(path, key: realPassphrase, """
            import sqlcipher3
            db = sqlcipher3.connect(path)
            db.execute("PRAGMA key = \\"%s\\"" % key)
            for pragma in args: db.execute("PRAGMA " + pragma)
            db.execute("CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT)")
            db.executemany("INSERT INTO note(title) VALUES (?)", [("note %d" % i,) for i in range(500)])
            db.commit()
            """, arguments: pragmas)
        return path
    }

    private func titles(_ plain: String) throws -> [String] {
        let db = try Database(path: plain)
        defer { db.close() }
        return try db.fetchAll(String.self, "SELECT title FROM note ORDER BY id")
    }

    func testDecryptFallsBackToThePageReaderForSettingsTheLinkedSQLCipherCannotOpen() throws {
        let path = try sqlcipher419File(["cipher_compatibility = 2"])
        let plain = path + ".plain"
        let run = try dbcrypt(["decrypt", path, "-o", plain, "--key-env", "KEY"], environment: passphraseEnvironment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("DBCrypt's page reader decrypted it"), run.stderr)
        XCTAssertTrue(run.stderr.contains("SQLCipher 2"), run.stderr)
        XCTAssertEqual(try titles(plain), (0..<500).map { "note \($0)" })
        let wrong = try dbcrypt(["decrypt", path, "-o", plain + "2", "--key-env", "OTHER"], environment: passphraseEnvironment)
        XCTAssertEqual(wrong.status, 3, wrong.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: plain + "2"))
    }

    /// A file with other hashes (SHA-256, written by SQLCipher 4.19): the
    /// hash options give them to SQLCipher itself on 4.x, and to the page
    /// reader on 3.4.1, whose SQLCipher has no such setting.
    func testOtherHashesGoToTheEngineWhereItHasThem() throws {
        let path = try sqlcipher419File(["cipher_kdf_algorithm = PBKDF2_HMAC_SHA256", "cipher_hmac_algorithm = HMAC_SHA256"])
        let hashes = ["--kdf-algorithm", "sha256", "--hmac-algorithm", "sha256"]
        let engine = try CipherInfo.linked().supports(.hmacAlgorithm)
        let plain = path + ".plain"
        let decrypt = try dbcrypt(["decrypt", path, "-o", plain, "--key-env", "KEY"] + hashes, environment: passphraseEnvironment)
        XCTAssertEqual(decrypt.status, 0, decrypt.stderr)
        XCTAssertEqual(decrypt.stderr.contains("page reader decrypted it"), !engine, decrypt.stderr)
        XCTAssertEqual(try titles(plain).count, 500)
        let check = try dbcrypt(["check", path, "--key-env", "KEY"] + hashes, environment: passphraseEnvironment)
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertEqual(check.stdout.contains("cannot open these settings"), !engine, check.stdout)
        XCTAssertEqual(check.stdout.contains("cipher_integrity_check passed"), engine, check.stdout)
        XCTAssertTrue(check.stdout.contains("every page's HMAC verified"), check.stdout)
    }

    /// An iOS app's database: DBCrypt gives it a plaintext header, SQLCipher
    /// 4.19 reads it with the printed salt, dbcrypt checks and decrypts it
    /// with --salt, and puts the standard layout back.
    func testAPlaintextHeaderForAnIOSAppAndBack() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path, rows: 500)
        try DatabaseEncryption.migrateInPlace(path, key: .passphrase(realPassphrase))
        let salt = try givePlaintextHeader(path, environment: passphraseEnvironment)
        XCTAssertEqual(try contents(path).prefix(16), Data("SQLite format 3\u{0}".utf8))
        XCTAssertEqual(try runPeer(path, key: realPassphrase, """
            import sqlcipher3
            db = sqlcipher3.connect(path)
            db.execute("PRAGMA key = \\"%s\\"" % key)
            db.execute("PRAGMA cipher_plaintext_header_size = 32")
            db.execute("PRAGMA cipher_salt = \\"x'%s'\\"" % args[0])
            print(db.execute("SELECT count(*) FROM note").fetchone()[0])
            """, arguments: [salt]), "500\n")

        let unsalted = try dbcrypt(["check", path, "--key-env", "KEY"], environment: passphraseEnvironment)
        XCTAssertEqual(unsalted.status, 3)
        XCTAssertTrue(unsalted.stderr.contains("give the salt"), unsalted.stderr)
        let check = try dbcrypt(["check", path, "--key-env", "KEY", "--salt", salt], environment: passphraseEnvironment)
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(check.stdout.contains("32-byte plaintext header"), check.stdout)
        let info = try dbcrypt(["info", path, "--key-env", "KEY", "--salt", salt, "--json"], environment: passphraseEnvironment)
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stdout.contains(#""header":"plaintext SQLite header, encrypted pages"#), info.stdout)
        // Read by the page reader (3.4.1) or by SQLCipher itself (4.x).
        XCTAssertTrue(info.stdout.contains(#""format":"SQLCipher 4, 32-byte plaintext header""#)
                      || info.stdout.contains(#""format":"sqlcipher4","plaintext_header_size":32"#), info.stdout)
        let plain = dir.appendingPathComponent("plain.db").path
        let decrypt = try dbcrypt(["decrypt", path, "-o", plain, "--key-env", "KEY", "--salt", salt], environment: passphraseEnvironment)
        XCTAssertEqual(decrypt.status, 0, decrypt.stderr)
        XCTAssertEqual(try titles(plain).count, 500)

        let back = try dbcrypt(["header", path, "--plaintext-header", "0", "--key-env", "KEY", "--salt", salt],
                               environment: passphraseEnvironment)
        XCTAssertEqual(back.status, 0, back.stderr)
        let db = try Database(path: path, key: .passphrase(realPassphrase))
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM note"), 500)
        db.close()
    }

    /// The widest plaintext header `header` writes, 96 bytes, leaves bytes
    /// 72-91 in the clear and zero, as a plaintext database has them: the
    /// file is still an encrypted one to every command (it was "damaged").
    func testANinetySixBytePlaintextHeaderIsStillAnEncryptedFile() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        try DatabaseEncryption.migrateInPlace(path, key: testKey)
        let header = try dbcrypt(["header", path, "--plaintext-header", "96", "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(header.status, 0, header.stderr)
        let salt = String(try XCTUnwrap(header.stdout.split(separator: "\n").first { $0.hasPrefix("salt: ") }).dropFirst(6))

        let outside = try dbcrypt(["info", path])
        XCTAssertEqual(outside.status, 0, outside.stderr)
        XCTAssertTrue(outside.stdout.contains("header: plaintext SQLite header, encrypted pages"), outside.stdout)
        let info = try dbcrypt(["info", path, "--key-env", "KEY", "--salt", salt], environment: keyEnvironment)
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stdout.contains("96-byte plaintext header"), info.stdout)
        let plain = dir.appendingPathComponent("plain.db").path
        let decrypt = try dbcrypt(["decrypt", path, "-o", plain, "--key-env", "KEY", "--salt", salt], environment: keyEnvironment)
        XCTAssertEqual(decrypt.status, 0, decrypt.stderr)
        XCTAssertEqual(try titles(plain).count, 200)
    }

    /// A plaintext header puts page 1's page size and reserve in the clear,
    /// which SQLCipher 1's settings (no HMAC) used to take as proof of the
    /// key: any key "opened" the file, and `header` rewrote page 1 with it.
    /// A wrong key, or a wrong salt, is a wrong key in every command, and
    /// changes no file.
    func testAWrongKeyOnAPlaintextHeaderIsAWrongKeyEverywhere() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path, rows: 50)
        try DatabaseEncryption.migrateInPlace(path, key: .passphrase(realPassphrase))
        let salt = try givePlaintextHeader(path, environment: passphraseEnvironment)
        let otherSalt = String(repeating: "ab", count: 16)
        let before = try snapshotFiles(in: dir)
        for (key, salt) in [("OTHER", salt), ("KEY", otherSalt)] {
            for command in [["check", "app.db"], ["info", "app.db"], ["decrypt", "app.db", "-o", "out.db"],
                            ["recover", "app.db", "-o", "out.db"], ["header", "app.db", "--plaintext-header", "0"]] {
                let run = try dbcrypt(command + ["--key-env", key, "--salt", salt], environment: passphraseEnvironment, in: dir)
                XCTAssertEqual(run.status, 3, "\(command) \(key): \(run.stdout) \(run.stderr)")
                XCTAssertEqual(try snapshotFiles(in: dir), before, "\(command) \(key) changed a file")
            }
        }
        let back = try dbcrypt(["header", "app.db", "--plaintext-header", "0", "--key-env", "KEY", "--salt", salt],
                               environment: passphraseEnvironment, in: dir)
        XCTAssertEqual(back.status, 0, back.stderr)
    }

    /// A raw key decrypts pages whatever the salt, which keys only their
    /// HMACs: with a wrong salt, SQLCipher 1's settings (no HMAC) used to
    /// "open" a file that has HMACs, `check` called it intact and `header`
    /// rewrote it. Pages that decrypt but whose HMACs fail are a wrong salt
    /// (status 3) in every command, and no file changes. The same holds for a
    /// standard file and a raw key that carries a wrong salt.
    func testARawKeyWithAWrongSaltIsAWrongSaltEverywhere() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path, rows: 50)
        try DatabaseEncryption.migrateInPlace(path, key: testKey)
        let standard = dir.appendingPathComponent("standard.db").path
        try FileManager.default.copyItem(atPath: path, toPath: standard)
        let salt = try givePlaintextHeader(path)
        let wrongSalt = String(repeating: "ab", count: 16)
        let environment = keyEnvironment.merging(["SALTED": "x'\(TestKeys.text.dropFirst(2).dropLast())\(wrongSalt)'"]) { $1 }
        let before = try snapshotFiles(in: dir)
        let commands = [["check", "app.db"], ["info", "app.db"], ["decrypt", "app.db", "-o", "out.db"],
                        ["recover", "app.db", "-o", "out.db"], ["header", "app.db", "--plaintext-header", "0"]]
        let cases = commands.map { $0 + ["--key-env", "KEY", "--salt", wrongSalt] }
            + [["check", "standard.db", "--key-env", "SALTED"], ["recover", "standard.db", "-o", "out.db", "--key-env", "SALTED"]]
        for command in cases {
            let run = try dbcrypt(command, environment: environment, in: dir)
            XCTAssertEqual(run.status, 3, "\(command): \(run.stdout) \(run.stderr)")
            XCTAssertFalse(run.stdout.contains("intact"), "\(command): \(run.stdout)")
            XCTAssertEqual(try snapshotFiles(in: dir), before, "\(command) changed a file")
        }
        let check = try dbcrypt(["check", "app.db", "--key-env", "KEY", "--salt", wrongSalt], environment: environment, in: dir)
        XCTAssertTrue(check.stderr.contains("do not verify with the salt given"), check.stderr)
        let right = try dbcrypt(["check", "app.db", "--key-env", "KEY", "--salt", salt], environment: environment, in: dir)
        XCTAssertEqual(right.status, 0, right.stderr)
        XCTAssertTrue(right.stdout.contains("every page's HMAC verified"), right.stdout)
    }

    /// A raw key that carries its salt opens a file with a plaintext header:
    /// no command calls it "not encrypted". SQLCipher 4.x reads it itself
    /// (`sql` too, with `--salt` beside a passphrase); on 3.4.1, which has
    /// no such setting, `decrypt` goes through the page reader and `sql`
    /// says what the engine lacks.
    func testARawKeyWithItsSaltOpensAPlaintextHeaderFile() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let raw = String(repeating: "5a", count: 32)
        try makePlaintextDatabase(path)
        try DatabaseEncryption.migrateInPlace(path, key: try DatabaseKey(sqlcipherRawKey: "x'\(raw)'"))
        let header = try dbcrypt(["header", path, "--plaintext-header", "32", "--key-env", "RAW"], environment: ["RAW": "x'\(raw)'"])
        XCTAssertEqual(header.status, 0, header.stderr)
        let salt = String(try XCTUnwrap(header.stdout.split(separator: "\n").first { $0.hasPrefix("salt: ") }).dropFirst(6))
        let environment = ["RAWSALT": "x'\(raw)\(salt)'"]

        let plain = dir.appendingPathComponent("plain.db").path
        let decrypt = try dbcrypt(["decrypt", path, "-o", plain, "--key-env", "RAWSALT"], environment: environment)
        XCTAssertEqual(decrypt.status, 0, decrypt.stderr)
        XCTAssertFalse(decrypt.stderr.contains("not encrypted"), decrypt.stderr)
        XCTAssertEqual(try titles(plain).count, 200)

        let sql = try dbcrypt(["sql", path, "--key-env", "RAWSALT", "SELECT count(*) FROM note"], environment: environment)
        let library = try CipherInfo.linked()
        // SQLCipher 4.x decrypts it itself; 3.4.1 leaves it to the page reader.
        XCTAssertEqual(decrypt.stderr.contains("page reader decrypted it"), !library.supports(.plaintextHeaderSize), decrypt.stderr)
        if library.supports(.plaintextHeaderSize) {
            XCTAssertEqual(sql.status, 0, sql.stderr)
            XCTAssertTrue(sql.stdout.contains("200"), sql.stdout)
        } else {
            XCTAssertEqual(sql.status, 1, sql.stderr)
            XCTAssertTrue(sql.stderr.contains("cipher_plaintext_header_size"), sql.stderr)
        }
    }

    func testRecoverBringsBackTheRowsOfEveryPageThatAuthenticates() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path, rows: 3000)
        try DatabaseEncryption.migrateInPlace(path, key: .passphrase(realPassphrase))
        let intact = dir.appendingPathComponent("intact.db").path
        let whole = try dbcrypt(["recover", path, "-o", intact, "--key-env", "KEY"], environment: passphraseEnvironment)
        XCTAssertEqual(whole.status, 0, whole.stderr)
        XCTAssertTrue(whole.stdout.contains("note: 3000 rows"), whole.stdout)
        XCTAssertTrue(whole.stdout.contains("Every one of the"), whole.stdout)

        var bytes = try contents(path)
        let pages = bytes.count / 4096
        for page in [1, pages / 2, pages - 1] { bytes[(page - 1) * 4096 + 300] ^= 0x55 }
        try bytes.write(to: URL(fileURLWithPath: path))
        let rescued = dir.appendingPathComponent("rescued.db").path
        let run = try dbcrypt(["recover", path, "-o", rescued, "--key-env", "KEY"], environment: passphraseEnvironment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("3 of \(pages) pages did not authenticate and were lost (pages 1, \(pages / 2), \(pages - 1))"), run.stdout)
        let db = try Database(path: rescued)
        defer { db.close() }
        let rows = try db.fetchAll(String.self, "SELECT name FROM sqlite_master WHERE type = 'table'")
        XCTAssertTrue(rows.contains("lost_and_found"), "\(rows)")
        let recovered = try db.fetchScalar(Int.self, "SELECT count(*) FROM lost_and_found") ?? 0
        XCTAssertGreaterThan(recovered, 2500)
        XCTAssertLessThan(recovered, 3002)
        XCTAssertEqual(try contents(path), bytes, "the damaged file is left as it was")
    }
}
