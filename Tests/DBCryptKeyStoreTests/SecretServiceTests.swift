import DBCrypt
import DBCryptKeyStore
import DBCryptSeal
import Foundation
import XCTest

/// The Secret Service store against a real gnome-keyring in a private D-Bus
/// session, with secret-tool (libsecret's own command) as the other side.
final class SecretServiceTests: XCTestCase {
    let store = SecretService()
    var session: KeyringSession { KeyringSession.shared }

    override func setUp() {
        _ = KeyringSession.shared
    }

    func testLoadOrCreateMakesARawKeyOnceAndLoadsItAfterwards() throws {
        let service = uniqueService()
        let first = try DatabaseKey.loadOrCreate(in: store, service: service, account: "main")
        XCTAssertEqual(first.kind, .rawWithSalt)
        let directory = try makeTemporaryDirectory(self)
        let path = directory.appendingPathComponent("app.db").path
        let db = try Database(path: path, key: first)
        try db.execute("CREATE TABLE opener(pid INTEGER); INSERT INTO opener VALUES (1)")
        db.close()
        // A later launch: the same key, loaded.
        let again = try DatabaseKey.loadOrCreate(in: store, service: service, account: "main")
        try assertOpens(path, with: again, rows: 1)
        try assertOpens(path, with: DatabaseKey.load(from: store, service: service, account: "main"), rows: 1)
        // Another account of the same service is another key.
        let other = try DatabaseKey.loadOrCreate(in: store, service: service, account: "other")
        XCTAssertThrowsError(try Database(path: path, key: other)) { error in
            XCTAssertEqual(error as? DatabaseError, .wrongKeyOrNotADatabase(path: path))
        }
    }

    func testAMissingItemIsNotFoundAndDeleteRemovesIt() throws {
        let service = uniqueService()
        assertThrows(.notFound(store: "the Secret Service", item: "\(service)/main")) {
            _ = try DatabaseKey.load(from: store, service: service, account: "main")
        }
        XCTAssertNil(try store.loadKey(service: service, account: "main"))
        assertThrows(.notFound(store: "the Secret Service", item: "\(service)/main")) {
            try DatabaseKey.delete(from: store, service: service, account: "main")
        }
        _ = try DatabaseKey.create(in: store, service: service, account: "main")
        assertThrows(.alreadyExists(store: "the Secret Service", item: "\(service)/main")) {
            _ = try DatabaseKey.create(in: store, service: service, account: "main")
        }
        try DatabaseKey.delete(from: store, service: service, account: "main")
        XCTAssertNil(try store.loadKey(service: service, account: "main"))
        XCTAssertEqual(try session.secretTool(["lookup", "service", service, "account", "main"]).status, 1)
    }

    func testSecretToolReadsWhatWeKeepAndWeReadWhatItKeeps() throws {
        let service = uniqueService()
        let key = try DatabaseKey(rawKey: [UInt8](repeating: 0xAB, count: 32), salt: [UInt8](repeating: 0x01, count: 16))
        try key.store(in: store, service: service, account: "main")
        let looked = try session.secretTool(["lookup", "service", service, "account", "main"])
        XCTAssertEqual(looked.status, 0)
        XCTAssertEqual(looked.printed, "x'" + String(repeating: "AB", count: 32) + String(repeating: "01", count: 16) + "'")

        // A passphrase another tool kept is a passphrase key, as a key file's is.
        XCTAssertEqual(try session.secretTool(["store", "--label=test", "service", service, "account", "pass"],
                                              input: "correct horse battery staple").status, 0)
        let passphrase = try DatabaseKey.load(from: store, service: service, account: "pass")
        XCTAssertEqual(passphrase.kind, .passphrase)
        let directory = try makeTemporaryDirectory(self)
        let path = directory.appendingPathComponent("p.db").path
        try makeOpenerDatabase(path, key: .passphrase("correct horse battery staple"))
        try assertOpens(path, with: passphrase, rows: 0)
    }

    func testAnItemThatIsNotAKeyIsNamed() throws {
        let service = uniqueService()
        for (account, text) in [("broken", "x'00112233'"), ("empty", "\n")] {
            XCTAssertEqual(try session.secretTool(["store", "--label=test", "service", service, "account", account], input: text).status, 0)
            XCTAssertThrowsError(try DatabaseKey.load(from: store, service: service, account: account)) { error in
                guard case let .notAKey(store, item, _)? = error as? KeyStoreError else { return XCTFail("\(error)") }
                XCTAssertEqual(store, "the Secret Service")
                XCTAssertEqual(item, "\(service)/\(account)")
                XCTAssertFalse("\(error)".contains("00112233"))
            }
            // loadOrCreate does not replace it: a database may use what is there.
            XCTAssertThrowsError(try DatabaseKey.loadOrCreate(in: store, service: service, account: account))
        }
    }

    func testALockedCollectionIsLockedNotMissing() throws {
        let locked = try KeyringSession()
        defer { locked.end() }
        let service = uniqueService()
        XCTAssertEqual(try locked.secretTool(["store", "--label=test", "service", service, "account", "main"],
                                             input: "x'" + String(repeating: "11", count: 32) + "'").status, 0)
        let environment = ["DBUS_SESSION_BUS_ADDRESS": locked.busAddress]
        XCTAssertEqual(try runHelper(["key-store-load", "secret-service", "\(service)/main"], environment: environment).1, "found raw\ndone\n")
        try locked.lockLoginCollection()
        let (status, printed, _) = try runHelper(["key-store-load", "secret-service", "\(service)/main"], environment: environment)
        XCTAssertEqual(status, 0)
        XCTAssertEqual(printed, "locked: \(KeyStoreError.locked(store: "the Secret Service"))\ndone\n")
        // A missing item of a locked collection is still missing.
        XCTAssertTrue(try runHelper(["key-store-load", "secret-service", "\(service)/other"], environment: environment).1.hasPrefix("notFound"))
    }

    func testNoSessionBusIsUnavailable() throws {
        let (status, printed, _) = try runHelper(["key-store-load", "secret-service", "dbcrypt/app"], removing: ["DBUS_SESSION_BUS_ADDRESS", "DISPLAY"])
        XCTAssertEqual(status, 0)
        XCTAssertTrue(printed.hasPrefix("unavailable: The Secret Service cannot be used here ("), printed)
        // A bus with no Secret Service on it.
        let bus = try runHelper(["key-store-load", "secret-service", "dbcrypt/app"],
                                environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/dbcrypt-bus"])
        XCTAssertTrue(bus.1.hasPrefix("unavailable: "), bus.1)
    }

    func testProcessesRacingOnTheFirstLaunchEndUpWithOneKey() throws {
        let directory = try makeTemporaryDirectory(self)
        let environment = ["DBUS_SESSION_BUS_ADDRESS": session.busAddress]
        for round in 0..<3 {
            let service = uniqueService()
            try assertRacersEndUpWithOneKey(store: "secret-service", item: "\(service)/main",
                                            database: directory.appendingPathComponent("race-\(round).db").path, environment: environment) {
                try DatabaseKey.load(from: store, service: service, account: "main")
            }
        }
    }

    func testAStoredKeySealsAndCredentialsAStore() throws {
        let service = uniqueService()
        let key = try DatabaseKey.loadOrCreate(in: store, service: service, account: "seal")
        let sealing = try SealingKey(key)
        let sealed = try sealing.seal("token", context: "ctx")
        let reloaded = try SealingKey(DatabaseKey.load(from: store, service: service, account: "seal"))
        XCTAssertEqual(try reloaded.openString(sealed, context: "ctx"), "token")
        XCTAssertThrowsError(try SealingKey(.passphrase("not a raw key")))
        guard case .key = try StoreCredential(key) else { return XCTFail("a raw key is a key credential") }
        guard case .passphrase = try StoreCredential(.passphrase("words")) else { return XCTFail("a passphrase stays one") }
    }
}
