#if os(Linux)
import DBCrypt
import DBCryptKeyStore
import Foundation
import XCTest

/// The kernel keyring store against the running kernel, with keyctl (the
/// keyutils command) as the other side, in this user's session keyring,
/// under names no other run uses.
final class KernelKeyringTests: XCTestCase {
    let store = KernelKeyring()

    /// keyctl in this process's session keyring: exit status and what it printed.
    func keyctl(_ arguments: [String], input: String? = nil) throws -> (Int32, String) {
        let (status, printed, _) = try runProgram("/usr/bin/keyctl", arguments, input: input)
        return (status, printed)
    }

    override func setUpWithError() throws {
        let joined = try runProgram("/usr/bin/keyctl", ["show", "@s"])
        XCTAssertEqual(joined.0, 0, "keyctl cannot reach the session keyring: \(joined.2)")
    }

    func testLoadOrCreateKeepsOneKeyThatKeyctlSees() throws {
        let account = uniqueService()
        let key = try DatabaseKey.loadOrCreate(in: store, service: "dbcrypt", account: account)
        XCTAssertEqual(key.kind, .rawWithSalt)
        let again = try DatabaseKey.loadOrCreate(in: store, service: "dbcrypt", account: account)
        let directory = try makeTemporaryDirectory(self)
        let path = directory.appendingPathComponent("k.db").path
        try makeOpenerDatabase(path, key: key)
        try assertOpens(path, with: again, rows: 0)
        // keyctl finds it under its description, in this user's session keyring.
        let (status, printed) = try keyctl(["pipe", "%user:dbcrypt:\(account)"])
        XCTAssertEqual(status, 0)
        XCTAssertTrue(printed.hasPrefix("x'") && printed.count == 99, "keyctl read \(printed.count) characters")
        try DatabaseKey.delete(from: store, service: "dbcrypt", account: account)
        XCTAssertNotEqual(try keyctl(["pipe", "%user:dbcrypt:\(account)"]).0, 0)
        XCTAssertNil(try store.loadKey(service: "dbcrypt", account: account))
    }

    func testAKeyKeyctlKeptIsReadAndWhatIsNotAKeyIsNamed() throws {
        let account = uniqueService()
        let raw = "x'" + String(repeating: "5a", count: 32) + "'"
        XCTAssertEqual(try keyctl(["padd", "user", "dbcrypt:\(account)", "@u"], input: raw).0, 0)
        XCTAssertEqual(try DatabaseKey.load(from: store, service: "dbcrypt", account: account).kind, .raw)
        XCTAssertEqual(try keyctl(["padd", "user", "dbcrypt:\(account)-bad", "@u"], input: "x'5a5a'").0, 0)
        XCTAssertThrowsError(try DatabaseKey.load(from: store, service: "dbcrypt", account: "\(account)-bad")) { error in
            guard case .notAKey(_, let item, _)? = error as? KeyStoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(item, "dbcrypt:\(account)-bad")
        }
        _ = try keyctl(["purge", "user", "dbcrypt:\(account)"])
        _ = try keyctl(["purge", "user", "dbcrypt:\(account)-bad"])
        assertThrows(.notFound(store: "the kernel keyring", item: "dbcrypt:\(account)")) {
            _ = try DatabaseKey.load(from: store, service: "dbcrypt", account: account)
        }
    }

    func testAKeyringThatRefusesWritesIsNamedAndKeepsNothing() throws {
        // A child in a session keyring of its own, which it may search but not write.
        let account = uniqueService()
        let script = """
            keyctl setperm @s 0x3b010000 && exec "$0" key-store-race kernel "dbcrypt/\(account)" "$1"
            """
        let directory = try makeTemporaryDirectory(self)
        let path = directory.appendingPathComponent("refused.db").path
        let (status, _, complaint) = try runProgram("/usr/bin/keyctl", ["session", "-", "sh", "-c", script, testHelperPath, path])
        XCTAssertEqual(status, 1)
        XCTAssertTrue(complaint.contains("\nThe kernel keyring refused the change (Permission denied): nothing was changed.\n"), complaint)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "no database is made without a kept key")
        XCTAssertNil(try store.loadKey(service: "dbcrypt", account: account))
    }

    func testProcessesRacingOnTheFirstLaunchEndUpWithOneKey() throws {
        let directory = try makeTemporaryDirectory(self)
        for round in 0..<3 {
            let account = uniqueService()
            try assertRacersEndUpWithOneKey(store: "kernel", item: "dbcrypt/\(account)",
                                            database: directory.appendingPathComponent("race-\(round).db").path) {
                try DatabaseKey.load(from: store, service: "dbcrypt", account: account)
            }
            try DatabaseKey.delete(from: store, service: "dbcrypt", account: account)
        }
    }
}
#endif
