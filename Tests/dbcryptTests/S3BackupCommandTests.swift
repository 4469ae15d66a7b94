import DBCrypt
import Foundation
import TestFixtures
import XCTest

/// `dbcrypt backup` and `dbcrypt restore` with `s3://` locations, against a
/// real S3 server (Ceph's RADOS Gateway, scripts/s3-server), on every
/// engine: the credentials from AWS's usual variables, never in an argument
/// or a message; one writer per prefix; a clock that is off; a wrong secret.
final class S3BackupCommandTests: XCTestCase {
    let server = S3TestServer.shared

    /// Variables for dbcrypt: the key, and the server with its writing user.
    var environment: [String: String] { keyEnvironment.merging(server.environment) { $1 } }

    func testShipsToABucketAndRestoresFromIt() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let location = server.freshLocation("cli")
        let pool = try DatabasePool(path: path, key: testKey)
        try pool.write { db in
            try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)")
            for _ in 0..<50 { try db.execute("INSERT INTO item(body) VALUES (hex(randomblob(40)))") }
        }
        try pool.close()
        let backup = try dbcrypt(["backup", "continuous", path, "--once", "-o", location, "--key-env", "KEY"], environment: environment)
        XCTAssertEqual(backup.status, 0, backup.stderr)
        XCTAssertTrue(backup.stdout.hasPrefix("shipped commit 0 at "), backup.stdout)
        try assertNoSecret(backup)

        let restored = dir.appendingPathComponent("restored.db").path
        let run = try dbcrypt(["restore", location, "-o", restored, "--key-env", "KEY"], environment: environment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.hasPrefix("Restored commit 0, shipped at "), run.stdout)
        XCTAssertTrue(run.stdout.hasSuffix("from \(location) to \(restored).\n"), run.stdout)
        // A 4.x engine's own shell reads what was restored (3.4.1's cannot read the SQLCipher 4 format).
        if shellIsSQLCipher4 {
            XCTAssertEqual(try runSQLCipherShell(restored, "PRAGMA key = \"\(keyText)\";\nSELECT count(*) FROM item;\n", defaults: .own), "50\n")
        } else {
            let db = try Database(path: restored, key: testKey)
            XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM item"), 50)
            db.close()
        }

        // The snapshot backup stores one object, and never replaces it.
        let object = location + "/copies/app.db"
        let copy = try dbcrypt(["backup", path, "-o", object, "--key-env", "KEY"], environment: environment)
        XCTAssertEqual(copy.status, 0, copy.stderr)
        XCTAssertEqual(copy.stdout, "Backed up \(path) to \(object) under its own key.\n")
        let again = try dbcrypt(["backup", path, "-o", object, "--key-env", "KEY"], environment: environment)
        XCTAssertEqual(again.status, 1, again.stderr)
        XCTAssertTrue(again.stderr.contains("/copies/app.db is already there"), again.stderr)
        let plain = try dbcrypt(["backup", path, "-o", object + "2", "--plaintext"], environment: environment)
        XCTAssertEqual(plain.status, 64, plain.stderr)
    }

    /// One writer per prefix, across processes: a second is refused while
    /// the first runs, and takes over at once when the first was killed
    /// (its lease names a process of this machine that is gone).
    func testOneWriterPerPrefixAndATakeOverAfterAKill() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let location = server.freshLocation("cli")
        let pool = try DatabasePool(path: path, key: testKey)
        try pool.write { db in try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)") }
        try pool.close()
        let first = try ChildProcess(dbcryptPath, ["backup", "continuous", path, "-o", location, "--interval", "0.05", "--key-env", "KEY"],
                                     environment: environment)
        let output = try XCTUnwrap(first.outputPipe).fileHandleForReading
        // Its first line: the snapshot is shipped, the lease is held.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let more = output.availableData
            if more.isEmpty { break }
            line += more
        }
        XCTAssertTrue(String(decoding: line, as: UTF8.self).hasPrefix("shipped commit 0"), String(decoding: line, as: UTF8.self))
        let second = try dbcrypt(["backup", "continuous", path, "--once", "-o", location, "--key-env", "KEY"], environment: environment)
        XCTAssertEqual(second.status, 1, second.stderr)
        XCTAssertTrue(second.stderr.hasPrefix("dbcrypt: Another backup is writing to \(location) at \(server.endpoint)"), second.stderr)

        kill(first.process.processIdentifier, SIGKILL)
        _ = first.finish()
        let third = try dbcrypt(["backup", "continuous", path, "--once", "-o", location, "--key-env", "KEY"], environment: environment)
        XCTAssertEqual(third.status, 0, third.stderr)
    }

    /// The service's refusals, each one sentence with what to change and status 1.
    func testAWrongSecretAClockThatIsOffAndNoCredentialsAreNamed() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let pool = try DatabasePool(path: path, key: testKey)
        try pool.write { db in try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)") }
        try pool.close()
        let location = server.freshLocation("cli")
        let arguments = ["backup", "continuous", path, "--once", "-o", location, "--key-env", "KEY"]

        var wrong = environment
        wrong["AWS_SECRET_ACCESS_KEY"] = "not-" + server.secretAccessKey
        let refused = try dbcrypt(arguments, environment: wrong)
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("refused the request: the secret access key is not the one of access key \(server.accessKeyID) (SignatureDoesNotMatch)"),
                      refused.stderr)
        XCTAssertFalse(refused.stderr.contains(server.secretAccessKey), "the message holds the secret")

        let none = try dbcrypt(arguments, environment: keyEnvironment.merging(["AWS_ENDPOINT_URL": server.endpoint, "HOME": dir.path]) { $1 },
                               removing: ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SHARED_CREDENTIALS_FILE", "AWS_PROFILE"])
        XCTAssertEqual(none.status, 1, none.stderr)
        XCTAssertEqual(none.stderr, "dbcrypt: No S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or write them in ~/.aws/credentials.\n")

        // A real process whose clock is 20 minutes ahead (libfaketime), whatever the machine's.
        let skewed = try runProgram("/usr/bin/faketime", ["-f", "+20m", dbcryptPath] + arguments, environment: environment)
        XCTAssertEqual(skewed.0, 1, skewed.2)
        XCTAssertTrue(skewed.2.contains("this machine's clock is 20 minutes ahead of the service's (RequestTimeTooSkewed): set the clock right (NTP) and try again"),
                      skewed.2)
    }

    /// The access key from a key store: an item of the Secret Service (a
    /// real gnome-keyring in a private session) or a service credential,
    /// each holding what a credentials file holds; none in the environment.
    func testCredentialsFromTheSecretServiceAndAServiceCredential() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let pool = try DatabasePool(path: path, key: testKey)
        try pool.write { db in try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)") }
        try pool.close()
        let text = "[default]\naws_access_key_id = \(server.accessKeyID)\naws_secret_access_key = \(server.secretAccessKey)\n"
        var environment = keyEnvironment.merging(["AWS_ENDPOINT_URL": server.endpoint, "AWS_REGION": server.region, "HOME": dir.path]) { $1 }

        let session = try KeyringSession()
        addTeardownBlock { session.end() }
        XCTAssertEqual(try session.secretTool(["store", "--label=s3", "service", "dbcrypt-s3", "account", "backups"], input: text).status, 0)
        environment["DBUS_SESSION_BUS_ADDRESS"] = session.busAddress
        let removing = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SHARED_CREDENTIALS_FILE", "AWS_PROFILE"]
        let fromKeyring = try dbcrypt(["backup", "continuous", path, "--once", "-o", server.freshLocation("cli"), "--key-env", "KEY",
                                       "--s3-keyring", "dbcrypt-s3/backups"], environment: environment, removing: removing)
        XCTAssertEqual(fromKeyring.status, 0, fromKeyring.stderr)
        try assertNoSecret(fromKeyring)

        let credentials = dir.appendingPathComponent("credentials")
        try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: credentials.appendingPathComponent("s3"))
        chmod(credentials.appendingPathComponent("s3").path, 0o400)
        environment["CREDENTIALS_DIRECTORY"] = credentials.path
        let fromCredential = try dbcrypt(["backup", "continuous", path, "--once", "-o", server.freshLocation("cli"), "--key-env", "KEY",
                                          "--s3-credential", "s3"], environment: environment, removing: removing)
        XCTAssertEqual(fromCredential.status, 0, fromCredential.stderr)
        // An empty AWS_PROFILE names no profile, as AWS's tools read it: the file's [default].
        let file = dir.appendingPathComponent("aws-credentials").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        let fromFile = try dbcrypt(["backup", "continuous", path, "--once", "-o", server.freshLocation("cli"), "--key-env", "KEY",
                                    "--s3-credentials-file", file], environment: environment.merging(["AWS_PROFILE": ""]) { $1 },
                                   removing: removing.filter { $0 != "AWS_PROFILE" })
        XCTAssertEqual(fromFile.status, 0, fromFile.stderr)
        let both = try dbcrypt(["backup", "continuous", path, "--once", "-o", server.freshLocation("cli"), "--key-env", "KEY",
                                "--s3-credential", "s3", "--s3-keyring", "dbcrypt-s3/backups"], environment: environment, removing: removing)
        XCTAssertEqual(both.status, 64, both.stderr)
        XCTAssertTrue(both.stderr.contains("Give one of --s3-credentials-file, --s3-keyring and --s3-credential"), both.stderr)
    }

    private func assertNoSecret(_ run: Run, file: StaticString = #filePath, line: UInt = #line) throws {
        for text in [run.stdout, run.stderr] {
            // The text is not shown: it would print the secret.
            XCTAssertFalse(text.contains(server.secretAccessKey), "the S3 secret appeared in what dbcrypt printed", file: file, line: line)
        }
    }
}
