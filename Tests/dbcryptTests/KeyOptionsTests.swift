import DBCrypt
import Foundation
import XCTest

/// Keys from files and variables, and never from anywhere visible.
final class KeyOptionsTests: XCTestCase {
    func testKeyFileWithATrailingNewlineIsThePassphrase() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        let keyFile = dir.appendingPathComponent("key.txt").path
        try Data((realPassphrase + "\n").utf8).write(to: URL(fileURLWithPath: keyFile))
        XCTAssertEqual(try dbcrypt(["migrate", path, "--key-file", keyFile]).status, 0)
        // The same passphrase from the environment, without the newline, opens it.
        XCTAssertEqual(try dbcrypt(["check", path, "--key-env", "KEY"], environment: passphraseEnvironment).status, 0)
        XCTAssertNoThrow(try Database(path: path, key: .passphrase(realPassphrase)))
    }

    func testRawKeyFile() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        let keyFile = dir.appendingPathComponent("raw.key").path
        try Data("x'\(rawKeyHex)'\n".utf8).write(to: URL(fileURLWithPath: keyFile))
        XCTAssertEqual(try dbcrypt(["migrate", path, "--key-file", keyFile]).status, 0)
        XCTAssertNoThrow(try Database(path: path, key: DatabaseKey(sqlcipherRawKey: "x'\(rawKeyHex)'")))
        // Another raw key does not open it.
        XCTAssertThrowsError(try Database(path: path, key: DatabaseKey(rawKey: [UInt8](repeating: 1, count: 32))))

        try Data("x'\(rawKeyHex.dropLast(2))'".utf8).write(to: URL(fileURLWithPath: keyFile))
        let malformed = try dbcrypt(["check", path, "--key-file", keyFile])
        XCTAssertEqual(malformed.status, 1)
        XCTAssertTrue(malformed.stderr.contains("malformed"), malformed.stderr)
    }

    func testMissingKeyOnANonTerminalIsRefused() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        let before = try contents(path)
        let run = try dbcrypt(["migrate", path])
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderr, "dbcrypt: No key given: use --key-env or --key-file (there is no terminal to ask on).\n")
        XCTAssertEqual(try contents(path), before)
    }

    func testUnsetVariableMissingFileAndBothSourcesAreRefused() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        let unset = try dbcrypt(["migrate", path, "--key-env", "DBCRYPT_NOT_SET"])
        XCTAssertEqual(unset.status, 1)
        XCTAssertTrue(unset.stderr.contains("DBCRYPT_NOT_SET is not set"), unset.stderr)
        let missing = try dbcrypt(["migrate", path, "--key-file", dir.appendingPathComponent("nope").path])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(try dbcrypt(["migrate", path, "--key-env", "KEY", "--key-file", "x"], environment: keyEnvironment).status, 64)
        XCTAssertEqual(try FileFormat.detect(at: path), .plaintext(pageSize: 4096, userVersion: 3))
    }

    func testEveryCommandsHelpHasAnExampleAndNoKeyOption() throws {
        for command in ["migrate", "decrypt", "rekey", "check", "info", "sql", "schema", "shell"] {
            let run = try dbcrypt([command, "--help"])
            XCTAssertEqual(run.status, 0)
            XCTAssertTrue(run.stdout.contains("Example"), command)
            XCTAssertFalse(run.stdout.contains("--key "), command)
            XCTAssertFalse(run.stdout.contains("--password"), command)
        }
        XCTAssertTrue(try dbcrypt(["--help"]).stdout.contains("Exit status: 0 success; 1 failure; 3 wrong key"))
    }
}
