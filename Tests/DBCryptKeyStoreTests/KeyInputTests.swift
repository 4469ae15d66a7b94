import DBCrypt
import DBCryptKeyStore
import Foundation
import XCTest

/// Keys read from where they are given (KeyInput), and key store items
/// named as a person names them (KeyStoreItem): real files, FIFOs and
/// environment variables.
final class KeyInputTests: XCTestCase {
    /// The text `key` is written as: what a key store keeps.
    func text(of key: DatabaseKey) -> [UInt8] { key.withKeyText { Array($0) } }

    /// A file in a new temporary directory holding `bytes`.
    func file(_ bytes: [UInt8], named name: String = "key") throws -> String {
        let path = try makeTemporaryDirectory(self).appendingPathComponent(name).path
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        return path
    }

    /// Asserts that `body` throws the KeyInputError `expected`.
    func assertThrows(_ expected: KeyInputError, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertEqual(error as? KeyInputError, expected, file: file, line: line)
        }
    }

    /// An environment variable no other test uses, set to `value` for the test.
    func variable(_ value: String) -> String {
        let name = "DBCRYPT_TEST_KEY_\(UUID().uuidString.prefix(8))"
        setenv(name, value, 1)
        addTeardownBlock { unsetenv(name) }
        return name
    }

    func testAKeyFileIsAPassphraseOrARawKeyWithoutItsNewline() throws {
        let passphrase = try KeyInput.file(file(Array("correct horse\n".utf8))).key()
        XCTAssertEqual(passphrase.kind, .passphrase)
        XCTAssertEqual(text(of: passphrase), Array("correct horse".utf8))
        let raw = "x'" + String(repeating: "0F", count: 48) + "'"   // written back in upper case
        let rawKey = try KeyInput.file(file(Array((raw + "\r\n").utf8))).key()
        XCTAssertEqual(rawKey.kind, .rawWithSalt)
        XCTAssertEqual(text(of: rawKey), Array(raw.utf8))
        // withText hands over the bytes as they are, newline included.
        let path = try file(Array("words\n".utf8))
        XCTAssertEqual(try KeyInput.file(path).withText { Array($0) }, Array("words\n".utf8))
    }

    func testAnEnvironmentVariableHoldsTheKey() throws {
        let name = variable("correct horse\n")
        let key = try KeyInput.environment(name).key()
        XCTAssertEqual(key.kind, .passphrase)
        XCTAssertEqual(text(of: key), Array("correct horse".utf8))
        XCTAssertEqual(KeyInput.environment(name).description, "the environment variable \(name)")
        let unset = "DBCRYPT_TEST_UNSET_\(UUID().uuidString.prefix(8))"
        assertThrows(.notSet(variable: unset)) { _ = try KeyInput.environment(unset).key() }
        XCTAssertEqual(KeyInputError.notSet(variable: unset).description, "The environment variable \(unset) is not set: put the key in it.")
    }

    func testAnEmptyKeyAndAMalformedRawKeyAreNamed() throws {
        for empty in ["", "\n", "\r\n"] {
            let path = try file(Array(empty.utf8))
            assertThrows(.empty(source: "the key file \(path)")) { _ = try KeyInput.file(path).key() }
        }
        let empty = variable("")
        assertThrows(.empty(source: "the environment variable \(empty)")) { _ = try KeyInput.environment(empty).key() }
        let path = try file(Array("x'zz'".utf8))
        assertThrows(.malformedRawKey(source: "the key file \(path)")) { _ = try KeyInput.file(path).key() }
        XCTAssertEqual(KeyInputError.malformedRawKey(source: "the key file k").description,
                       "The raw key in the key file k is malformed: write x' then 64 hex digits (or 96 with the salt) then '.")
        XCTAssertEqual(KeyInputError.empty(source: "the key file k").description, "The key in the key file k is empty.")
    }

    func testNoKeyIsLongerThan64KiB() throws {
        let longest = try file([UInt8](repeating: UInt8(ascii: "a"), count: KeyInput.limit))
        XCTAssertEqual(try KeyInput.file(longest).withText { $0.count }, 65536)
        let longer = try file([UInt8](repeating: UInt8(ascii: "a"), count: KeyInput.limit + 1))
        assertThrows(.tooLong(source: "the key file \(longer)")) { _ = try KeyInput.file(longer).key() }
        assertThrows(.tooLong(source: "the key file /dev/zero")) { _ = try KeyInput.file("/dev/zero").key() }
        let huge = variable(String(repeating: "a", count: KeyInput.limit + 1))
        assertThrows(.tooLong(source: "the environment variable \(huge)")) { _ = try KeyInput.environment(huge).key() }
        XCTAssertEqual(KeyInputError.tooLong(source: "the key file /dev/zero").description,
                       "The key file /dev/zero holds more than 64 KiB, far more than any key: check that it names the key.")
    }

    func testAFileThatCannotBeReadIsNamedWithTheSystemsReason() throws {
        let directory = try makeTemporaryDirectory(self).path
        assertThrows(.unreadable(source: "the key file \(directory)/missing", reason: "No such file or directory")) {
            _ = try KeyInput.file(directory + "/missing").key()
        }
        assertThrows(.unreadable(source: "the key file \(directory)", reason: "Is a directory")) { _ = try KeyInput.file(directory).key() }
        XCTAssertEqual(KeyInputError.unreadable(source: "the key file k", reason: "Is a directory").description,
                       "Cannot read the key file k: Is a directory.")
    }

    func testAFIFOIsReadToItsEnd() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("fifo").path
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        // Written in two pieces by another thread: the reader waits for the end, as cat does.
        let writer = Thread {
            guard let handle = FileHandle(forWritingAtPath: path) else { return }
            handle.write(Data("correct ".utf8))
            handle.write(Data("horse\n".utf8))
            try? handle.close()
        }
        writer.start()
        let key = try KeyInput.file(path).key()
        XCTAssertEqual(text(of: key), Array("correct horse".utf8))
    }

    func testWithoutATerminalThereIsNoKey() throws {
        try XCTSkipIf(isatty(STDIN_FILENO) == 1, "standard input is a terminal here")
        assertThrows(.noTerminal) { _ = try KeyInput.terminal(prompt: "Key: ", confirm: false).key() }
        XCTAssertEqual(KeyInput.terminal(prompt: "Key: ", confirm: true).description, "the terminal")
    }

    func testAnItemIsNamedAsItsStoreTakesIt() throws {
        let item = try KeyStoreItem(keyring: "com.example/notes/main")
        XCTAssertEqual(item.kind, .secretService)
        XCTAssertEqual(item.service, "com.example")
        XCTAssertEqual(item.account, "notes/main")
        XCTAssertEqual(item.name, "com.example/notes/main")
        XCTAssertTrue(item.canCreate)
        XCTAssertNil(item.forgottenAtRestartNote)
        XCTAssertEqual(KeyInput.item(item).description, "the Secret Service (com.example/notes/main)")
        #if os(Linux)
        let kernel = try KeyStoreItem(kernelKeyring: "app")
        XCTAssertEqual(kernel.name, "dbcrypt:app")
        XCTAssertTrue(kernel.canCreate)
        XCTAssertEqual(kernel.forgottenAtRestartNote,
                       "The kernel keyring forgets the key dbcrypt:app when the machine restarts: keep a copy somewhere lasting, readable by you alone: (umask 077; keyctl pipe %user:dbcrypt:app > FILE).")
        #endif
        let credential = try KeyStoreItem(credential: "db")
        XCTAssertEqual(credential.kind, .credential)
        XCTAssertFalse(credential.canCreate)
        XCTAssertNil(credential.forgottenAtRestartNote)
    }

    func testAMalformedItemNameIsRefusedBeforeTheStoreIsAsked() throws {
        for name in ["app", "/app", "app/", ""] {
            assertThrows(.malformedItemName(.secretService, name: name)) { _ = try KeyStoreItem(keyring: name) }
        }
        assertThrows(.malformedItemName(.kernelKeyring, name: "")) { _ = try KeyStoreItem(kernelKeyring: "") }
        for name in ["", ".", "..", "../key", "a/b"] {
            assertThrows(.malformedItemName(.credential, name: name)) { _ = try KeyStoreItem(credential: name) }
        }
        let service = "s/" + String(repeating: "a", count: 4094)
        XCTAssertNoThrow(try KeyStoreItem(keyring: service))
        assertThrows(.itemNameTooLong(.secretService, name: service + "a", limit: 4096)) { _ = try KeyStoreItem(keyring: service + "a") }
        let kernel = String(repeating: "k", count: 4088)
        assertThrows(.itemNameTooLong(.kernelKeyring, name: kernel, limit: 4087)) { _ = try KeyStoreItem(kernelKeyring: kernel) }
        XCTAssertNoThrow(try KeyStoreItem(credential: String(repeating: "c", count: 255)))
        let credential = String(repeating: "c", count: 256)
        assertThrows(.itemNameTooLong(.credential, name: credential, limit: 255)) { _ = try KeyStoreItem(credential: credential) }
        XCTAssertEqual(KeyInputError.malformedItemName(.kernelKeyring, name: "").category, .misuse)
    }

    func testACredentialItemGivesItsKeyAndIsNeverMade() throws {
        let directory = try makeTemporaryDirectory(self).path
        let path = directory + "/db"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("correct horse\n".utf8), attributes: [.posixPermissions: 0o400]))
        setenv("CREDENTIALS_DIRECTORY", directory, 1)
        addTeardownBlock { unsetenv("CREDENTIALS_DIRECTORY") }
        let item = try KeyStoreItem(credential: "db")
        XCTAssertEqual(text(of: try KeyInput.item(item).key()), Array("correct horse".utf8))
        let (key, created) = try item.loadOrCreate()
        XCTAssertFalse(created)
        XCTAssertEqual(text(of: key), Array("correct horse".utf8))
        XCTAssertThrowsError(try KeyStoreItem(credential: "missing").loadOrCreate()) { error in
            XCTAssertEqual(error as? KeyStoreError, .notFound(store: "the service credentials", item: "missing"))
        }
    }
}
