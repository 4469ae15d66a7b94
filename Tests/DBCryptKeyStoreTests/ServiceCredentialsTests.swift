import DBCrypt
import DBCryptKeyStore
import Foundation
import XCTest

/// Service credentials: files in a directory as systemd's LoadCredential= makes them.
final class ServiceCredentialsTests: XCTestCase {
    func credentials(_ files: [String: (text: String, mode: Int)]) throws -> ServiceCredentials {
        let directory = try makeTemporaryDirectory(self)
        for (name, file) in files {
            let path = directory.appendingPathComponent(name).path
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(file.text.utf8), attributes: [.posixPermissions: file.mode]))
        }
        return ServiceCredentials(directory: directory.path)
    }

    func testACredentialIsReadAsAKeyFileIs() throws {
        let store = try credentials([
            "raw": ("x'" + String(repeating: "0f", count: 48) + "'\n", 0o400),
            "pass": ("correct horse battery staple\n", 0o440),
        ])
        XCTAssertEqual(try DatabaseKey.load(from: store, service: "", account: "raw").kind, .rawWithSalt)
        let passphrase = try DatabaseKey.load(from: store, service: "", account: "pass")
        let directory = try makeTemporaryDirectory(self)
        let path = directory.appendingPathComponent("c.db").path
        try makeOpenerDatabase(path, key: .passphrase("correct horse battery staple"))
        try assertOpens(path, with: passphrase, rows: 0)
    }

    func testBadCredentialsAreNamed() throws {
        let store = try credentials(["open": ("secret words", 0o644), "groupwritable": ("secret words", 0o460), "empty": ("", 0o400)])
        let path = store.directory! + "/open"
        assertThrows(.exposed(path: path, mode: 0o644)) { _ = try DatabaseKey.load(from: store, service: "", account: "open") }
        assertThrows(.exposed(path: store.directory! + "/groupwritable", mode: 0o460)) {
            _ = try DatabaseKey.load(from: store, service: "", account: "groupwritable")
        }
        assertThrows(.notAKey(store: "the service credentials", item: "empty", reason: "it is empty")) {
            _ = try DatabaseKey.load(from: store, service: "", account: "empty")
        }
        assertThrows(.notFound(store: "the service credentials", item: "missing")) {
            _ = try DatabaseKey.load(from: store, service: "", account: "missing")
        }
        XCTAssertThrowsError(try DatabaseKey.load(from: store, service: "", account: "../open"))
        XCTAssertFalse("\(KeyStoreError.exposed(path: path, mode: 0o644))".contains("secret words"))
    }

    func testCredentialsAreReadOnlyAndNeedTheirDirectory() throws {
        let store = try credentials([:])
        XCTAssertThrowsError(try DatabaseKey.loadOrCreate(in: store, service: "", account: "new")) { error in
            guard case .writeRefused? = error as? KeyStoreError else { return XCTFail("\(error)") }
        }
        let (_, printed, _) = try runHelper(["key-store-load", "credentials", "/key"], removing: ["CREDENTIALS_DIRECTORY"])
        XCTAssertTrue(printed.hasPrefix("unavailable: The service credentials cannot be used here (CREDENTIALS_DIRECTORY is not set"), printed)
    }
}
