import DBCrypt
import Foundation
import XCTest

/// `dbcrypt kv` and `dbcrypt envelope` end to end: values in through
/// standard input and out through standard output, never in arguments;
/// the database itself shows only ciphertext; envelopes cross to Python's
/// `cryptography` and back.
final class KVCommandTests: XCTestCase {
    var work: URL!
    let environment = keyEnvironment

    override func setUpWithError() throws {
        work = try makeTemporaryDirectory(self)
        try makePlaintextDatabase(work.appendingPathComponent("plain.db").path)
        try DatabaseEncryption.encrypt(work.appendingPathComponent("plain.db").path,
                                       to: work.appendingPathComponent("app.db").path, key: testKey)
    }

    private func kv(_ arguments: [String], input: Data? = nil, store: String = "STORE", as user: uid_t? = nil,
                    file: StaticString = #filePath, line: UInt = #line) throws -> Run {
        try dbcrypt(["kv", "app.db"] + arguments + ["--key-env", "KEY", "--store-key-env", store],
                    environment: environment, in: work, as: user, input: input, file: file, line: line)
    }

    func testSetGetListRemoveRotateAndPasswd() throws {
        let token = Data("tok-\u{1F511}-".utf8) + Data([0, 255, 10])
        XCTAssertEqual(try kv(["set", "api.token", "--create"], input: token).status, 0)
        XCTAssertEqual(try kv(["set", "api.user"], input: Data("grace".utf8)).status, 0)
        XCTAssertEqual(try kv(["set", "other"], input: Data()).status, 0)
        let got = try kv(["get", "api.token"])
        XCTAssertEqual(got.status, 0, got.stderr)
        XCTAssertEqual(Data(got.stdout.utf8), Data(String(decoding: token, as: UTF8.self).utf8), "the value, byte for byte, no newline added")
        XCTAssertEqual(try kv(["list", "--prefix", "api."]).stdout, "api.token\napi.user\n")
        XCTAssertEqual(try kv(["list"]).stdout, "api.token\napi.user\nother\n")
        // The subcommand first, as the help writes it, reads the same.
        let first = try dbcrypt(["kv", "get", "app.db", "api.user", "--key-env", "KEY", "--store-key-env", "STORE"], environment: environment, in: work)
        XCTAssertEqual(first.stdout, "grace", first.stderr)

        // The database's own SQL sees ciphertext only.
        let sql = try dbcrypt(["sql", "app.db", "--key-env", "KEY", "SELECT * FROM dbcrypt_sealed_entry"], environment: environment, in: work)
        XCTAssertEqual(sql.status, 0, sql.stderr)
        for plaintext in ["api.token", "api.user", "grace", "tok-"] { XCTAssertFalse(sql.stdout.contains(plaintext), plaintext) }

        let rotated = try kv(["rotate"])
        XCTAssertEqual(rotated.status, 0, rotated.stderr)
        XCTAssertTrue(rotated.stdout.contains("3 entries"), rotated.stdout)
        let keyIDs = try dbcrypt(["sql", "app.db", "--key-env", "KEY", "SELECT DISTINCT hex(substr(value, 2, 4)) FROM dbcrypt_sealed_entry"],
                                 environment: environment, in: work)
        XCTAssertTrue(keyIDs.stdout.hasSuffix("\n00000002\n"), keyIDs.stdout)

        let passwd = try dbcrypt(["kv", "app.db", "passwd", "--key-env", "KEY", "--store-key-env", "STORE", "--new-store-key-env", "NEW_STORE"],
                                 environment: environment, in: work)
        XCTAssertEqual(passwd.status, 0, passwd.stderr)
        XCTAssertEqual(try kv(["get", "api.user"], store: "NEW_STORE").stdout, "grace")
        let old = try kv(["get", "api.user"])
        XCTAssertEqual(old.status, 3)
        XCTAssertTrue(old.stderr.contains("wrong passphrase or key"), old.stderr)

        XCTAssertEqual(try kv(["remove", "api.user"], store: "NEW_STORE").status, 0)
        let gone = try kv(["get", "api.user"], store: "NEW_STORE")
        XCTAssertEqual(gone.status, 1)
        XCTAssertEqual(gone.stderr, "dbcrypt: Store \"default\" has no entry \"api.user\".\n")
        XCTAssertEqual(try kv(["remove", "api.user"], store: "NEW_STORE").status, 1)
    }

    /// A store's raw key reads as a database key does, in every spelling:
    /// `X'...'`, and `x'...'` with 96 digits (a key store's form, salt
    /// included) are one key, not two passphrases.
    func testAStoresRawKeyIsReadInEverySpellingADatabaseKeyIs() throws {
        let hex = String(repeating: "5c", count: 32)
        let spellings = ["UPPER": "X'\(hex.uppercased())'", "SALTED": "x'\(hex)\(String(repeating: "0e", count: 16))'"]
        let set = try dbcrypt(["kv", "set", "app.db", "n", "--create", "--key-env", "KEY", "--store-key-env", "UPPER"],
                              environment: environment.merging(spellings) { $1 }, in: work, input: Data("v".utf8))
        XCTAssertEqual(set.status, 0, set.stderr)
        let get = try dbcrypt(["kv", "get", "app.db", "n", "--key-env", "KEY", "--store-key-env", "SALTED"],
                              environment: environment.merging(spellings) { $1 }, in: work)
        XCTAssertEqual(get.status, 0, get.stderr)
        XCTAssertEqual(get.stdout, "v")
    }

    /// Names that are not valid UTF-8 are refused (Swift would replace the
    /// bytes, so that `inv\xfe` overwrote `inv\xff`); names with a newline,
    /// a quote, a backslash, or none at all, list as themselves.
    func testNamesAreUTF8AndListAsThemselves() throws {
        XCTAssertEqual(try kv(["set", "seed", "--create"], input: Data("0".utf8)).status, 0)
        for bytes in ["inv\\376", "inv\\377"] {
            let (status, _, said) = try ChildProcess(
                "/bin/sh", ["-c", "exec \"$0\" kv app.db set \"$(printf '\(bytes)')\" --key-env KEY --store-key-env STORE", dbcryptPath],
                environment: environment, directory: work).finish()
            XCTAssertEqual(status, 64, said)
            XCTAssertEqual(said, "dbcrypt: Argument 4 is not valid UTF-8: dbcrypt reads entry names, paths and SQL as UTF-8 text.\n")
        }
        let names = ["a\nb", "a\\nb", "", "\"\"", "tab\there", "line\u{2028}sep", "txt.\u{202E}exe"]
        for name in names { XCTAssertEqual(try kv(["set", name], input: Data(name.utf8)).status, 0, name) }
        let listed = try kv(["list"]).stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        // A right-to-left override would reorder the line it is printed on: escaped, as a line separator is.
        XCTAssertEqual(Set(listed), [#"a\nb"#, #"a\\nb"#, #""""#, #"\"\""#, #"tab\there"#, #"line\u2028sep"#, #"txt.\u202eexe"#, "seed"])
        let json = try kv(["list", "--json"]).stdout
        let decoded = try JSONDecoder().decode([String].self, from: Data(json.utf8))
        XCTAssertEqual(Set(decoded), Set(names + ["seed"]))
        for name in names { XCTAssertEqual(try kv(["get", name]).stdout, name) }
    }

    /// A value or a name altered in the file is the same kind of damage,
    /// status 4 (a value was status 1). An envelope that does not open is
    /// status 3, in the envelope's own words.
    func testAlteredValuesAndNamesAreDamageAndEnvelopesSaySo() throws {
        XCTAssertEqual(try kv(["set", "a", "--create"], input: Data("1".utf8)).status, 0)
        XCTAssertEqual(try kv(["set", "b"], input: Data("2".utf8)).status, 0)
        for column in ["value", "name"] {
            // Every row gets the last row's value (or name): one of them is moved.
            let move = "UPDATE dbcrypt_sealed_entry SET \(column) = (SELECT \(column) FROM dbcrypt_sealed_entry ORDER BY tag DESC LIMIT 1)"
            XCTAssertEqual(try dbcrypt(["sql", "app.db", move, "--key-env", "KEY"], environment: environment, in: work).status, 0)
            if column == "value" {
                let statuses = try ["a", "b"].map { try kv(["get", $0]).status }
                XCTAssertEqual(statuses.sorted(), [0, 4], "one value moved, one in place")
            } else {
                let run = try kv(["list"])
                XCTAssertEqual(run.status, 4, run.stderr)
            }
            // Set again, both are whole again.
            XCTAssertEqual(try kv(["set", "a"], input: Data("1".utf8)).status, 0)
            XCTAssertEqual(try kv(["set", "b"], input: Data("2".utf8)).status, 0)
        }
        XCTAssertEqual(try kv(["list"]).stdout, "a\nb\n")
        let keyEnv = ["ENVELOPE_KEY": String(repeating: "ab", count: 32), "OTHER_KEY": String(repeating: "cd", count: 32)]
        let sealed = try dbcrypt(["envelope", "seal", "--key-env", "ENVELOPE_KEY"], environment: keyEnv, input: Data("hi".utf8))
        let opened = try dbcrypt(["envelope", "open", "--key-env", "OTHER_KEY"], environment: keyEnv, input: Data(sealed.stdout.utf8))
        XCTAssertEqual(opened.status, 3)
        XCTAssertEqual(opened.stderr, "dbcrypt: The envelope does not open: its key or additional data is not this one, or it was altered.\n")
    }

    /// A user who may only read the database: get and list work; set is
    /// refused in one sentence and changes nothing.
    func testReadingNeedsNoWriteAccess() throws {
        try skipUnless(geteuid() == 0, "reading as another user needs root")
        XCTAssertEqual(try kv(["set", "k", "--create"], input: Data("v".utf8)).status, 0)
        let path = work.appendingPathComponent("app.db").path
        XCTAssertEqual(chmod(work.path, 0o755), 0)
        XCTAssertEqual(chmod(path, 0o644), 0)
        let before = try contents(path)
        XCTAssertEqual(try kv(["get", "k"], as: 65534).stdout, "v")
        XCTAssertEqual(try kv(["list"], as: 65534).stdout, "k\n")
        let refused = try kv(["set", "k"], input: Data("w".utf8), as: 65534)
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertEqual(refused.stderr, "dbcrypt: Cannot write app.db: this user may only read it (or its directory): nothing was changed.\n")
        // The same for SQL that writes.
        let sql = try dbcrypt(["sql", "app.db", "--key-env", "KEY", "DELETE FROM note"], environment: environment, in: work, as: 65534)
        XCTAssertEqual(sql.stderr, "dbcrypt: Cannot write app.db: this user may only read it (or its directory): nothing was changed.\n")
        XCTAssertEqual(try contents(path), before)
    }

    /// dbcrypt seals, Python's cryptography opens; Python seals, dbcrypt opens;
    /// with a Base64 key, a hex key and the padded text key.
    func testEnvelopesCrossToPythonAndBack() throws {
        let rawKey = (0..<32).map { UInt8(($0 * 53 + 7) % 256) }
        let keys: [(text: String, padded: Bool, bytes: [UInt8])] = [
            (Data(rawKey).base64EncodedString(), false, rawKey),
            (rawKey.map { String(format: "%02x", $0) }.joined(), false, rawKey),
            ("short server key", true, Array("short server key0000000000000000".utf8)),
        ]
        for key in keys {
            let env = environment.merging(["ENCRYPTION_KEY": key.text]) { $1 }
            let flags = ["--key-env", "ENCRYPTION_KEY"] + (key.padded ? ["--padded-text-key"] : [])
            let sealed = try dbcrypt(["envelope", "seal"] + flags, environment: env, in: work, input: Data("from dbcrypt".utf8))
            XCTAssertEqual(sealed.status, 0, sealed.stderr)
            let printed = try runPeer("", key: Data(key.bytes).base64EncodedString(), """
                import base64
                from cryptography.hazmat.primitives.ciphers.aead import AESGCM
                aes = AESGCM(base64.b64decode(key))
                raw = base64.b64decode(args[0])
                print(aes.decrypt(raw[:12], raw[28:] + raw[12:28], b'additional-data').decode())
                iv = os.urandom(12)
                sealed = aes.encrypt(iv, b'from python', b'additional-data')
                print(base64.b64encode(iv + sealed[-16:] + sealed[:-16]).decode())
                """, arguments: [sealed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)])
            let lines = printed.split(separator: "\n").map(String.init)
            XCTAssertEqual(lines.first, "from dbcrypt")
            guard lines.count == 2 else { return XCTFail(printed) }
            let opened = try dbcrypt(["envelope", "open"] + flags, environment: env, in: work, input: Data((lines[1] + "\n").utf8))
            XCTAssertEqual(opened.status, 0, opened.stderr)
            XCTAssertEqual(opened.stdout, "from python")
            let other = try dbcrypt(["envelope", "open", "--additional-data", "other"] + flags, environment: env, in: work,
                                    input: Data(lines[1].utf8))
            XCTAssertEqual(other.status, 3)
            XCTAssertTrue(other.stderr.contains("The envelope does not open"), other.stderr)
        }
    }
}
