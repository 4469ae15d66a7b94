import DBCrypt
import Foundation
import XCTest

/// `dbcrypt rekey`.
final class RekeyCommandTests: XCTestCase {
    func testChangesTheKeyAndConvertsTheFormat() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        try DatabaseEncryption.migrateInPlace(path, key: .passphrase(passphrase), cipher: .sqlcipher3)

        let run = try dbcrypt(["rekey", path, "--key-env", "KEY", "--new-key-env", "OTHER", "--format", "sqlcipher4"],
                              environment: keyEnvironment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertThrowsError(try Database(path: path, key: .passphrase(passphrase)))
        let db = try Database(path: path, key: .passphrase(otherPassphrase))
        XCTAssertEqual(db.cipher, .sqlcipher4)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM note"), 200)
    }

    func testKeepsTheFormatWhenNoneIsGiven() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        try DatabaseEncryption.migrateInPlace(path, key: .passphrase(passphrase), cipher: .sqlcipher3)
        XCTAssertEqual(try dbcrypt(["rekey", path, "--key-env", "KEY", "--new-key-env", "OTHER"], environment: keyEnvironment).status, 0)
        XCTAssertEqual(try Database(path: path, key: .passphrase(otherPassphrase)).cipher, .sqlcipher3)
    }

    func testWrongCurrentKeyExitsThreeAndChangesNothing() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        try DatabaseEncryption.migrateInPlace(path, key: .passphrase(passphrase))
        let before = try contents(path)
        let run = try dbcrypt(["rekey", path, "--key-env", "OTHER", "--new-key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 3, run.stderr)
        XCTAssertEqual(try contents(path), before)
    }

    func testMissingNewKeyOnANonTerminalIsRefused() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        try DatabaseEncryption.migrateInPlace(path, key: .passphrase(passphrase))
        let before = try contents(path)
        let run = try dbcrypt(["rekey", path, "--key-env", "KEY"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("No key given: use --new-key-env or --new-key-file"), run.stderr)
        XCTAssertEqual(try contents(path), before)
    }
}
