import DBCrypt
import Foundation
import XCTest

/// Keys the user never types: `dbcrypt key`, and every command's
/// --key-keyring, --key-kernel-keyring and --key-credential, against a real
/// gnome-keyring in a private D-Bus session and the real kernel keyring.
final class KeyCommandTests: XCTestCase {
    /// A session of this test's own, and the environment that reaches it.
    func keyringSession() throws -> (KeyringSession, [String: String]) {
        let session = try KeyringSession()
        addTeardownBlock { session.end() }
        return (session, ["DBUS_SESSION_BUS_ADDRESS": session.busAddress])
    }

    func testMigrateMakesAKeyInTheKeyringThatEveryCommandThenUses() throws {
        let (session, bus) = try keyringSession()
        let directory = try makeTemporaryDirectory(self)
        let path = directory.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)

        let migrated = try dbcrypt(["migrate", path, "--key-keyring", "dbcrypt/app", "--format", "sqlcipher3"], environment: bus)
        XCTAssertEqual(migrated.status, 0, migrated.stderr)
        XCTAssertTrue(migrated.stdout.hasSuffix("under a new key kept in the Secret Service as dbcrypt/app.\n"), migrated.stdout)
        XCTAssertNil(try contents(path).range(of: Data("Grace".utf8)))
        XCTAssertEqual(try dbcrypt(["key", "exists", "--keyring", "dbcrypt/app"], environment: bus).status, 0)

        // Queried, checked and described with no key typed.
        let counted = try dbcrypt(["sql", path, "--key-keyring", "dbcrypt/app", "SELECT count(*) AS n FROM note"], environment: bus)
        XCTAssertEqual(counted.status, 0, counted.stderr)
        XCTAssertEqual(counted.stdout, " n\n---\n200\n")
        XCTAssertEqual(try dbcrypt(["check", path, "--key-keyring", "dbcrypt/app"], environment: bus).status, 0)

        // The engine's own shell opens it with the key secret-tool reads.
        let key = try session.secretTool(["lookup", "service", "dbcrypt", "account", "app"])
        XCTAssertEqual(key.status, 0)
        XCTAssertEqual(key.printed.count, 99, "a raw key with its salt")
        XCTAssertEqual(try runSQLCipherShell(path, "PRAGMA key = \"\(key.printed)\";\nSELECT count(*) FROM note;\n"), "200\n")

        // A second migrate of another file uses the key that is there.
        let second = directory.appendingPathComponent("second.db").path
        try makePlaintextDatabase(second, rows: 3)
        let reused = try dbcrypt(["migrate", second, "--key-keyring", "dbcrypt/app"], environment: bus)
        XCTAssertEqual(reused.status, 0, reused.stderr)
        XCTAssertFalse(reused.stdout.contains("new key"), reused.stdout)
        XCTAssertEqual(try dbcrypt(["sql", second, "--key-keyring", "dbcrypt/app", "SELECT count(*) FROM note"], environment: bus).status, 0)
    }

    func testAFailedMigrationRemovesTheKeyItMadeAndChangesNothing() throws {
        let (_, bus) = try keyringSession()
        let directory = try makeTemporaryDirectory(self)
        let path = directory.appendingPathComponent("app.db").path
        let output = directory.appendingPathComponent("taken.db").path
        try makePlaintextDatabase(path)
        XCTAssertTrue(FileManager.default.createFile(atPath: output, contents: Data("already here".utf8)))
        let before = try snapshotFiles(in: directory)

        let failed = try dbcrypt(["migrate", path, "-o", output, "--key-keyring", "dbcrypt/app"], environment: bus)
        XCTAssertEqual(failed.status, 1)
        XCTAssertTrue(failed.stderr.contains("already exists"), failed.stderr)
        XCTAssertTrue(failed.stderr.contains("The key made for this run was removed from the Secret Service again (dbcrypt/app)."), failed.stderr)
        XCTAssertEqual(try dbcrypt(["key", "exists", "--keyring", "dbcrypt/app"], environment: bus).status, 6)
        XCTAssertEqual(try snapshotFiles(in: directory), before)

        // A key that was there before the failed run stays.
        XCTAssertEqual(try dbcrypt(["key", "create", "--keyring", "dbcrypt/app"], environment: bus).status, 0)
        XCTAssertEqual(try dbcrypt(["migrate", path, "-o", output, "--key-keyring", "dbcrypt/app"], environment: bus).status, 1)
        XCTAssertEqual(try dbcrypt(["key", "exists", "--keyring", "dbcrypt/app"], environment: bus).status, 0)
    }

    /// A refused backup, rekey or migration whose output exists as an empty
    /// file: the key made for the run goes again. An empty file holds no data
    /// under any key (it was once taken for one that did, and the key stayed
    /// with "the data is encrypted with it").
    func testAKeyMadeForARunRefusedBesideAnEmptyFileIsRemoved() throws {
        let (_, bus) = try keyringSession()
        let directory = try makeTemporaryDirectory(self)
        let path = directory.appendingPathComponent("app.db").path
        let plain = directory.appendingPathComponent("plain.db").path
        let output = directory.appendingPathComponent("empty.db").path
        try makeDatabase(path, schema: "CREATE TABLE t(x)").close()
        try makePlaintextDatabase(plain)
        XCTAssertTrue(FileManager.default.createFile(atPath: output, contents: Data()))
        let before = try snapshotFiles(in: directory)
        let name = "refused-\(UUID().uuidString)"
        for (command, store) in [(["backup", path, "-o", output, "--key-env", "KEY"], ["--new-key-kernel-keyring", name]),
                                 (["backup", path, "-o", output, "--key-env", "KEY"], ["--new-key-keyring", "dbcrypt/\(name)"]),
                                 (["migrate", plain, "-o", output], ["--key-kernel-keyring", name])] {
            let run = try dbcrypt(command + store, environment: keyEnvironment.merging(bus) { $1 })
            XCTAssertEqual(run.status, 1, "\(command) \(store): \(run.stderr)")
            XCTAssertFalse(run.stderr.contains("stays"), "\(store): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("was removed from"), "\(store): \(run.stderr)")
            let where_ = store[0].hasSuffix("kernel-keyring") ? ["--kernel-keyring", name] : ["--keyring", "dbcrypt/\(name)"]
            XCTAssertEqual(try dbcrypt(["key", "exists"] + where_, environment: bus).status, 6, "\(store): the key stayed")
            XCTAssertEqual(try snapshotFiles(in: directory), before)
        }
    }

    func testKeyCreateExistsDeleteInBothKeyrings() throws {
        let (_, bus) = try keyringSession()
        let name = "cli-\(UUID().uuidString.prefix(8))"
        for store in [["--keyring", "dbcrypt/\(name)"], ["--kernel-keyring", name]] {
            XCTAssertEqual(try dbcrypt(["key", "exists"] + store, environment: bus).status, 6)
            let made = try dbcrypt(["key", "create"] + store, environment: bus)
            XCTAssertEqual(made.status, 0, made.stderr)
            XCTAssertTrue(made.stdout.hasPrefix("Made a new random key in the "), made.stdout)
            XCTAssertFalse(made.stdout.contains("x'"))
            let again = try dbcrypt(["key", "create"] + store, environment: bus)
            XCTAssertEqual(again.status, 1)
            XCTAssertTrue(again.stderr.contains("already holds a key named"), again.stderr)
            XCTAssertEqual(try dbcrypt(["key", "exists"] + store, environment: bus).status, 0)
            XCTAssertEqual(try dbcrypt(["key", "delete"] + store, environment: bus).status, 0)
            XCTAssertEqual(try dbcrypt(["key", "delete"] + store, environment: bus).status, 6)
        }
    }

    func testTheKernelKeyringKeepsAKeyForTheShell() throws {
        let name = "cli-\(UUID().uuidString.prefix(8))"
        let directory = try makeTemporaryDirectory(self)
        let path = directory.appendingPathComponent("k.db").path
        try makePlaintextDatabase(path, rows: 5)
        let migrated = try dbcrypt(["migrate", path, "--key-kernel-keyring", name])
        XCTAssertEqual(migrated.status, 0, migrated.stderr)
        XCTAssertTrue(migrated.stderr.contains("The kernel keyring forgets the key dbcrypt:\(name) when the machine restarts"), migrated.stderr)
        let counted = try dbcrypt(["sql", path, "--key-kernel-keyring", name, "SELECT count(*) FROM note"])
        XCTAssertEqual(counted.stdout, "count(*)\n--------\n       5\n")
        // The new key of rekey, made there too; the old one removed by hand.
        let rekeyed = try dbcrypt(["rekey", path, "--key-kernel-keyring", name, "--new-key-kernel-keyring", "\(name)-2"])
        XCTAssertEqual(rekeyed.status, 0, rekeyed.stderr)
        XCTAssertEqual(try dbcrypt(["sql", path, "--key-kernel-keyring", name, "SELECT 1"]).status, 3)
        XCTAssertEqual(try dbcrypt(["sql", path, "--key-kernel-keyring", "\(name)-2", "SELECT count(*) FROM note"]).status, 0)

        // The shell's .rekey and .backup --new-key make a missing key there too; one made for a .backup that fails is removed.
        func shell(_ key: String, _ newKey: String, _ script: String) throws -> Run {
            try dbcrypt(["shell", path, "--key-kernel-keyring", key, "--new-key-kernel-keyring", newKey], input: Data(script.utf8))
        }
        let rekeyedInShell = try shell("\(name)-2", "\(name)-3", ".rekey\nSELECT count(*) FROM note;\n")
        XCTAssertEqual(rekeyedInShell.status, 0, rekeyedInShell.stderr)
        XCTAssertEqual(rekeyedInShell.stdout, "5\n")
        XCTAssertEqual(try dbcrypt(["sql", path, "--key-kernel-keyring", "\(name)-3", "SELECT 1"]).status, 0)
        let failed = try shell("\(name)-3", "\(name)-4", ".backup \(path) --new-key\n")
        XCTAssertEqual(failed.status, 1)
        XCTAssertTrue(failed.stderr.contains("The key made for this run was removed from the kernel keyring again"), failed.stderr)
        XCTAssertEqual(try dbcrypt(["key", "exists", "--kernel-keyring", "\(name)-4"]).status, 6)
        let copy = directory.appendingPathComponent("copy.db").path
        XCTAssertEqual(try shell("\(name)-3", "\(name)-4", ".backup \(copy) --new-key\n").status, 0)
        XCTAssertEqual(try dbcrypt(["sql", copy, "--key-kernel-keyring", "\(name)-4", "SELECT count(*) FROM note"]).stdout, "count(*)\n--------\n       5\n")
        for suffix in ["", "-2", "-3", "-4"] { XCTAssertEqual(try dbcrypt(["key", "delete", "--kernel-keyring", name + suffix]).status, 0) }
    }

    /// `kv passwd` takes its new key from a key store as every key option
    /// group does, and makes a missing one there.
    func testKVPasswdMovesAStoreToAKeyMadeInTheKernelKeyring() throws {
        let name = "kv-\(UUID().uuidString.prefix(8))"
        let directory = try makeTemporaryDirectory(self)
        try makeDatabase(directory.appendingPathComponent("app.db").path, schema: "CREATE TABLE t(x)").close()
        func kv(_ arguments: [String], input: String? = nil) throws -> Run {
            try dbcrypt(["kv"] + arguments + ["--key-env", "KEY"], environment: keyEnvironment, in: directory, input: input.map { Data($0.utf8) })
        }
        XCTAssertEqual(try kv(["set", "app.db", "token", "--create", "--store-key-env", "STORE"], input: "s3cret").status, 0)
        let moved = try kv(["passwd", "app.db", "--store-key-env", "STORE", "--new-store-key-kernel-keyring", name])
        XCTAssertEqual(moved.status, 0, moved.stderr)
        XCTAssertEqual(moved.stdout, "Changed the passphrase of store \"default\", a new key kept in the kernel keyring as dbcrypt:\(name).\n")
        XCTAssertEqual(try kv(["get", "app.db", "token", "--store-key-kernel-keyring", name]).stdout, "s3cret")
        XCTAssertEqual(try kv(["get", "app.db", "token", "--store-key-env", "STORE"]).status, 3)
        // And back to a passphrase; the key stays in the keyring until deleted.
        XCTAssertEqual(try kv(["passwd", "app.db", "--store-key-kernel-keyring", name, "--new-store-key-env", "NEW_STORE"]).status, 0)
        XCTAssertEqual(try kv(["get", "app.db", "token", "--store-key-env", "NEW_STORE"]).stdout, "s3cret")
        XCTAssertEqual(try dbcrypt(["key", "delete", "--kernel-keyring", name]).status, 0)
    }

    /// A `kv passwd` that fails (another connection holds the write lock
    /// past the busy timeout) removes the key it made: the store is still
    /// sealed under its passphrase.
    func testAFailedKVPasswdRemovesTheKeyItMade() throws {
        let name = "kv-\(UUID().uuidString.prefix(8))"
        let directory = try makeTemporaryDirectory(self)
        let path = directory.appendingPathComponent("app.db").path
        try makeDatabase(path, schema: "CREATE TABLE t(x)").close()
        func kv(_ arguments: [String], input: String? = nil) throws -> Run {
            try dbcrypt(["kv"] + arguments + ["--key-env", "KEY"], environment: keyEnvironment, in: directory, input: input.map { Data($0.utf8) })
        }
        XCTAssertEqual(try kv(["set", "app.db", "token", "--create", "--store-key-env", "STORE"], input: "s3cret").status, 0)
        let holder = try Database(path: path, key: testKey)
        try holder.execute("BEGIN IMMEDIATE")
        let failed = try kv(["passwd", "app.db", "--store-key-env", "STORE", "--new-store-key-kernel-keyring", name])
        try holder.execute("ROLLBACK")
        holder.close()
        XCTAssertEqual(failed.status, 1, failed.stderr)
        XCTAssertTrue(failed.stderr.contains("The key made for this run was removed from the kernel keyring again"), failed.stderr)
        XCTAssertEqual(try dbcrypt(["key", "exists", "--kernel-keyring", name]).status, 6)
        XCTAssertEqual(try kv(["get", "app.db", "token", "--store-key-env", "STORE"]).stdout, "s3cret")
    }

    func testBadKeyStoresGetOneSentenceAndTheirOwnStatusAndChangeNothing() throws {
        let (session, bus) = try keyringSession()
        let directory = try makeTemporaryDirectory(self)
        let path = directory.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path)
        XCTAssertEqual(try dbcrypt(["migrate", path, "--key-keyring", "dbcrypt/app"], environment: bus).status, 0)
        XCTAssertEqual(try session.secretTool(["store", "--label=junk", "service", "dbcrypt", "account", "junk"], input: "x'1234'").status, 0)
        let credentials = directory.appendingPathComponent("credentials")
        try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.createFile(atPath: credentials.appendingPathComponent("open").path, contents: Data(keyText.utf8),
                                                     attributes: [.posixPermissions: 0o644]))
        let plain = directory.appendingPathComponent("plain.db").path
        try makePlaintextDatabase(plain, rows: 3)
        let before = try snapshotFiles(in: directory)

        let cases: [(String, [String], [String: String], [String], Int32, String)] = [
            ("no session bus", ["--key-keyring", "dbcrypt/app"], [:], ["DBUS_SESSION_BUS_ADDRESS", "DISPLAY"], 5,
             "The Secret Service cannot be used here ("),
            ("a missing item", ["--key-keyring", "dbcrypt/missing"], bus, [], 6, "The Secret Service holds no key named dbcrypt/missing"),
            ("an item that is not a key", ["--key-keyring", "dbcrypt/junk"], bus, [], 7,
             "What the Secret Service holds under dbcrypt/junk is not a key (a raw key is written x'"),
            ("a missing kernel key", ["--key-kernel-keyring", "missing-\(UUID().uuidString)"], [:], [], 6, "The kernel keyring holds no key named dbcrypt:missing-"),
            ("no credentials directory", ["--key-credential", "db"], [:], ["CREDENTIALS_DIRECTORY"], 5,
             "The service credentials cannot be used here (CREDENTIALS_DIRECTORY is not set"),
            ("a credential others may read", ["--key-credential", "open"], ["CREDENTIALS_DIRECTORY": credentials.path], [], 7,
             "The credential \(credentials.path)/open may be read or changed by other users (mode 644)"),
        ]
        for (what, option, environment, removing, status, sentence) in cases {
            for command in [["sql", path, "SELECT count(*) FROM note"], ["rekey", path, "--new-key-env", "KEY"], ["decrypt", path, "-o", path + ".out"]] {
                let run = try dbcrypt(command + option, environment: environment.merging(keyEnvironment) { $1 }, removing: removing)
                XCTAssertEqual(run.status, status, "\(what), \(command[0]): \(run.stderr)")
                XCTAssertTrue(run.stderr.hasPrefix("dbcrypt: \(sentence)"), "\(what), \(command[0]): \(run.stderr)")
                XCTAssertEqual(run.stderr.filter { $0 == "\n" }.count, 1, "one sentence: \(run.stderr)")
            }
        }
        // A locked collection, last: it cannot be unlocked here without a prompt.
        try session.lockLoginCollection()
        for command in [["sql", path, "SELECT 1"], ["key", "create"]] {
            let option = command[0] == "key" ? ["--keyring", "dbcrypt/other"] : ["--key-keyring", "dbcrypt/app"]
            let locked = try dbcrypt(command + option, environment: bus)
            XCTAssertEqual(locked.status, 5, locked.stderr)
            XCTAssertEqual(locked.stderr, "dbcrypt: The Secret Service is locked: unlock its collection (log in to the desktop session) and try again.\n")
        }
        let migrate = try dbcrypt(["migrate", plain, "--key-keyring", "dbcrypt/new"], environment: bus)
        XCTAssertEqual(migrate.status, 5, migrate.stderr)
        XCTAssertEqual(try snapshotFiles(in: directory), before)
    }

    func testTheSealedStoreAndTheEnvelopeTakeKeysFromTheKeyring() throws {
        let (session, bus) = try keyringSession()
        let directory = try makeTemporaryDirectory(self)
        let path = directory.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path, rows: 3)
        XCTAssertEqual(try dbcrypt(["migrate", path, "--key-keyring", "dbcrypt/db"], environment: bus).status, 0)
        let keys = ["--key-keyring", "dbcrypt/db", "--store-key-keyring", "dbcrypt/store"]

        // A new store gets a key made for it; later runs load it.
        let set = try dbcrypt(["kv", path, "set", "api.token", "--create"] + keys, environment: bus, input: Data("tok_live_1".utf8))
        XCTAssertEqual(set.status, 0, set.stderr)
        XCTAssertEqual(try dbcrypt(["key", "exists", "--keyring", "dbcrypt/store"], environment: bus).status, 0)
        XCTAssertEqual(try dbcrypt(["kv", path, "get", "api.token"] + keys, environment: bus).stdout, "tok_live_1")
        // A key store without the key, for an existing store, makes no key.
        let wrong = try dbcrypt(["kv", path, "get", "api.token", "--key-keyring", "dbcrypt/db", "--store-key-keyring", "dbcrypt/other"],
                                environment: bus)
        XCTAssertEqual(wrong.status, 6, wrong.stderr)
        XCTAssertEqual(try dbcrypt(["key", "exists", "--keyring", "dbcrypt/other"], environment: bus).status, 6)

        // The envelope takes the raw key kept there; Python's cryptography opens it with the same bytes.
        XCTAssertEqual(try dbcrypt(["key", "create", "--keyring", "dbcrypt/envelope"], environment: bus).status, 0)
        let sealed = try dbcrypt(["envelope", "seal", "--key-keyring", "dbcrypt/envelope"], environment: bus, input: Data("hello".utf8))
        XCTAssertEqual(sealed.status, 0, sealed.stderr)
        let stored = try session.secretTool(["lookup", "service", "dbcrypt", "account", "envelope"]).printed
        let printed = try runPeer("", key: String(stored.dropFirst(2).prefix(64)), """
            import base64
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
            raw = base64.b64decode(args[0])
            print(AESGCM(bytes.fromhex(key)).decrypt(raw[:12], raw[28:] + raw[12:28], b'additional-data').decode())
            """, arguments: [sealed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)])
        XCTAssertEqual(printed, "hello\n")
        let opened = try dbcrypt(["envelope", "open", "--key-keyring", "dbcrypt/envelope"], environment: bus, input: Data(sealed.stdout.utf8))
        XCTAssertEqual(opened.stdout, "hello")
    }

    func testNoCommandPrintsTheKeyAndARefusingKeyringChangesNothing() throws {
        let (session, bus) = try keyringSession()
        let directory = try makeTemporaryDirectory(self)
        let path = directory.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path, rows: 3)
        var runs = [try dbcrypt(["migrate", path, "--key-keyring", "dbcrypt/app"], environment: bus)]
        for command in [["info", path], ["check", path], ["sql", path, "SELECT count(*) FROM note"]] {
            runs.append(try dbcrypt(command + ["--key-keyring", "dbcrypt/app"], environment: bus))
        }
        runs.append(try dbcrypt(["key", "exists", "--keyring", "dbcrypt/app"], environment: bus))
        let text = try session.secretTool(["lookup", "service", "dbcrypt", "account", "app"]).printed
        let hex = String(text.dropFirst(2).prefix(64))
        XCTAssertEqual(hex.count, 64)
        for run in runs {
            XCTAssertEqual(run.status, 0, run.stderr)
            for printed in [run.stdout, run.stderr] {
                XCTAssertFalse(printed.uppercased().contains(hex.uppercased()), "a command printed the key")
                XCTAssertFalse(printed.contains(hex.prefix(16)), "a command printed part of the key")
            }
        }

        // A session keyring that may be searched but not written: one sentence, status 1, no key, no file.
        let plain = directory.appendingPathComponent("plain.db").path
        try makePlaintextDatabase(plain, rows: 3)
        let before = try snapshotFiles(in: directory)
        let name = "refused-\(UUID().uuidString.prefix(8))"
        for command in [["key", "create", "--kernel-keyring", name], ["migrate", plain, "--key-kernel-keyring", name]] {
            let (status, _, complaint) = try runProgram(
                "/usr/bin/keyctl", ["session", "-", "sh", "-c", "keyctl setperm @s 0x3b010000 && exec \"$0\" \"$@\"", dbcryptPath] + command)
            XCTAssertEqual(status, 1, complaint)
            XCTAssertTrue(complaint.hasSuffix("\ndbcrypt: The kernel keyring refused the change (Permission denied): nothing was changed.\n"), complaint)
        }
        XCTAssertEqual(try snapshotFiles(in: directory), before)
        XCTAssertEqual(try dbcrypt(["key", "exists", "--kernel-keyring", name]).status, 6)
    }

    func testOneKeySourceAtATime() throws {
        let run = try dbcrypt(["sql", "x.db", "--key-env", "KEY", "--key-keyring", "dbcrypt/app", "SELECT 1"], environment: keyEnvironment)
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.hasPrefix("dbcrypt: Give one of --key-env, --key-file, --key-keyring"), run.stderr)
        let malformed = try dbcrypt(["sql", "x.db", "--key-keyring", "app", "SELECT 1"])
        XCTAssertEqual(malformed.status, 64)
        XCTAssertEqual(malformed.stderr, "dbcrypt: --key-keyring takes SERVICE/ACCOUNT (say dbcrypt/app), not app: see 'dbcrypt sql --help'.\n")
    }
}
