import DBCrypt
import Foundation
import XCTest

/// Standard input that cannot be read and standard output that cannot be
/// written: one sentence and exit status 1, never a crash (SIGILL and a
/// backtrace) and never lost output that exits 0; nothing is made or
/// changed when the input is not there.
final class StandardStreamsCommandTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = try makeTemporaryDirectory(self)
        try makePlaintextDatabase(dir.appendingPathComponent("plain.db").path)
        try DatabaseEncryption.encrypt(dir.appendingPathComponent("plain.db").path, to: dir.appendingPathComponent("app.db").path,
                                       key: testKey)
        let made = try dbcrypt(["kv", "app.db", "set", "token", "--create", "--key-env", "KEY", "--store-key-env", "STORE"],
                               environment: keyEnvironment, in: dir, input: Data("value".utf8))
        XCTAssertEqual(made.status, 0, made.stderr)
    }

    private let key = ["--key-env", "KEY", "--store-key-env", "STORE"]
    private let envelopeKey = ["ENVELOPE_KEY": String(repeating: "ab", count: 32)]

    func testADirectoryAsStandardInputIsOneSentenceAndMakesNothing() throws {
        let before = try snapshotFiles(in: dir)
        for arguments in [["kv", "app.db", "set", "other", "--store", "new", "--create"] + key,
                          ["kv", "app.db", "set", "token"] + key, ["envelope", "seal", "--key-env", "ENVELOPE_KEY"]] {
            let stdin = try XCTUnwrap(FileHandle(forReadingAtPath: dir.path))
            let run = try dbcrypt(arguments, environment: keyEnvironment.merging(envelopeKey) { $1 }, in: dir, standardInput: stdin)
            XCTAssertEqual(run.status, 1, "\(arguments): \(run.stderr)")
            XCTAssertEqual(run.stderr, "dbcrypt: Cannot read standard input: Is a directory.\n", "\(arguments)")
            XCTAssertEqual(try snapshotFiles(in: dir), before, "\(arguments) changed a file")
        }
    }

    /// `/dev/zero` never ends: as standard input, a key file or a key
    /// variable's worth of bytes, each input has a bound and one sentence
    /// past it (status 1), and nothing is made or changed.
    func testAnEndlessInputStopsAtItsBound() throws {
        let before = try snapshotFiles(in: dir)
        let environment = keyEnvironment.merging(envelopeKey) { $1 }
            .merging(["HUGE": String(repeating: "k", count: 64 * 1024 + 1)]) { $1 }
        let cases: [(arguments: [String], stdin: Bool, says: String)] = [
            (["kv", "app.db", "set", "other"] + key, true, "Standard input holds more than 64 MiB"),
            (["envelope", "seal", "--key-env", "ENVELOPE_KEY"], true, "Standard input holds more than 64 MiB"),
            (["sql", "app.db", "SELECT 1", "--key-file", "/dev/zero"], false, "The key file /dev/zero holds more than 64 KiB"),
            (["sql", "app.db", "SELECT 1", "--key-env", "HUGE"], false, "The environment variable HUGE holds more than 64 KiB"),
            (["rekey", "app.db", "--key-env", "KEY", "--new-key-file", "/dev/zero"], false, "The key file /dev/zero holds more than 64 KiB"),
            (["kv", "app.db", "get", "token", "--key-env", "KEY", "--store-key-file", "/dev/zero"], false,
             "The key file /dev/zero holds more than 64 KiB"),
            (["kv", "app.db", "passwd", "--key-env", "KEY", "--store-key-env", "STORE", "--new-store-key-file", "/dev/zero"], false,
             "The key file /dev/zero holds more than 64 KiB"),
            (["envelope", "open", "--key-file", "/dev/zero"], false, "The key file /dev/zero holds more than 64 KiB"),
        ]
        for (arguments, endlessInput, says) in cases {
            let stdin = endlessInput ? try XCTUnwrap(FileHandle(forReadingAtPath: "/dev/zero")) : nil
            let run = try dbcrypt(arguments, environment: environment, in: dir, input: endlessInput ? nil : Data(), standardInput: stdin)
            XCTAssertEqual(run.status, 1, "\(arguments): \(run.stderr)")
            XCTAssertTrue(run.stderr.hasPrefix("dbcrypt: \(says)"), "\(arguments): \(run.stderr)")
            XCTAssertEqual(run.stderr.filter { $0 == "\n" }.count, 1, "\(arguments): one sentence: \(run.stderr)")
            XCTAssertEqual(try snapshotFiles(in: dir), before, "\(arguments) changed a file")
        }
    }

    func testAFullOrClosedStandardOutputIsOneSentence() throws {
        let sealed = try dbcrypt(["envelope", "seal", "--key-env", "ENVELOPE_KEY"], environment: envelopeKey, input: Data("hi".utf8))
        XCTAssertEqual(sealed.status, 0, sealed.stderr)
        let cases: [(arguments: [String], input: Data?)] = [
            (["kv", "app.db", "get", "token"] + key, nil), (["kv", "app.db", "list"] + key, nil),
            (["envelope", "seal", "--key-env", "ENVELOPE_KEY"], Data("hi".utf8)),
            (["envelope", "open", "--key-env", "ENVELOPE_KEY"], Data(sealed.stdout.utf8)),
            (["sql", "app.db", "SELECT * FROM note", "--key-env", "KEY"], nil), (["info", "app.db", "--key-env", "KEY"], nil),
        ]
        let closedPipe = Pipe()
        try closedPipe.fileHandleForReading.close()
        for (output, says) in [("/dev/full", "No space left on device"), ("closed pipe", "Broken pipe")] {
            for (arguments, input) in cases {
                let stdout = output == "/dev/full" ? try XCTUnwrap(FileHandle(forWritingAtPath: output)) : closedPipe.fileHandleForWriting
                let run = try dbcrypt(arguments, environment: keyEnvironment.merging(envelopeKey) { $1 }, in: dir,
                                      input: input, standardOutput: stdout)
                XCTAssertEqual(run.status, 1, "\(arguments) > \(output): \(run.stderr)")
                XCTAssertEqual(run.stderr, "dbcrypt: Cannot write to standard output: \(says).\n", "\(arguments) > \(output)")
            }
        }
    }
}
