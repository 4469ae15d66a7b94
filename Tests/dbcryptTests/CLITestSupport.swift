import DBCrypt
import Foundation
import XCTest
@_exported import TestFixtures

/// The key most end-to-end tests give `--key-env KEY`, and the other one
/// (`OTHER`): raw keys, which cost no key derivation.
let keyText = TestKeys.text
let otherKeyText = TestKeys.otherText
/// ``keyText`` and ``otherKeyText`` as keys, for the library's side of a test.
let testKey = TestKeys.key
let otherKey = TestKeys.other
/// Real passphrases, each derived at every open (256,000 iterations of
/// PBKDF2): for the tests where derivation is the point, the peers'
/// interoperability and the terminal prompt (``passphraseEnvironment``).
let realPassphrase = "cli-secret-passphrase"
let otherRealPassphrase = "cli-other-passphrase"
/// A raw key the tests write out as hex themselves.
let rawKeyHex = String(repeating: "0123abcd", count: 8)
/// Every secret the end-to-end tests use: no run may show one in its
/// arguments, its output or its errors.
let testSecrets = TestKeys.secrets + [realPassphrase, otherRealPassphrase, "0123abcd0123abcd", "0123ABCD0123ABCD"]

/// What one run of `dbcrypt` did.
struct Run {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Runs `dbcrypt` with `arguments`, `environment` added to this process's,
/// the variables in `removing` taken away, and no terminal (standard input
/// is `input`, or empty, or `standardInput`; standard output a pipe, or
/// `standardOutput`); as `user` when given (which needs root). Checks that no secret appears
/// in the arguments or in anything printed.
@discardableResult
func dbcrypt(_ arguments: [String], environment: [String: String] = [:], removing: [String] = [], in directory: URL? = nil,
             as user: uid_t? = nil, input: Data? = nil, standardInput: FileHandle? = nil, standardOutput: FileHandle? = nil,
             file: StaticString = #filePath, line: UInt = #line) throws -> Run {
    // setpriv (util-linux) runs it as another user, with that user's group and no others.
    let (executable, commandLine) = user.map { ("/usr/bin/setpriv", ["--reuid=\($0)", "--regid=\($0)", "--clear-groups", dbcryptPath] + arguments) }
        ?? (dbcryptPath, arguments)
    let child = try ChildProcess(executable, commandLine, environment: environment, removing: removing, directory: directory,
                                 input: input, standardInput: standardInput, standardOutput: standardOutput.map { .to($0) } ?? .captured)
    let (status, stdout, stderr) = child.finish()
    // No input ends dbcrypt by a signal (a trap's SIGILL, a crash): every run checks it.
    XCTAssertFalse(child.endedBySignal, "dbcrypt \(arguments.prefix(6)) ended by signal \(status): \(stderr.prefix(300))",
                   file: file, line: line)
    let run = Run(status: status, stdout: stdout, stderr: stderr)
    for secret in testSecrets {
        for text in arguments + [run.stdout, run.stderr] {
            XCTAssertFalse(text.contains(secret), "a key appeared in: \(text.prefix(200))", file: file, line: line)
        }
    }
    return run
}

/// The environment that gives `dbcrypt --key-env KEY` the test key,
/// `--key-env OTHER` the other one, and `--store-key-env STORE` and
/// `NEW_STORE` a sealed store's raw keys.
let keyEnvironment = ["KEY": keyText, "OTHER": otherKeyText, "STORE": TestKeys.storeText, "NEW_STORE": TestKeys.otherStoreText]
/// The environment that gives `--key-env KEY` and `OTHER` real passphrases.
let passphraseEnvironment = ["KEY": realPassphrase, "OTHER": otherRealPassphrase]

/// The bytes of a file, to prove it unchanged.
func contents(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

/// Every file under `dir`: its bytes and mode, a link's target, or what
/// kind of file it is (directory, FIFO, device).
func snapshotFiles(in dir: URL) throws -> [String: Data] {
    var files: [String: Data] = [:]
    let manager = FileManager.default
    for name in try manager.subpathsOfDirectory(atPath: dir.path) {
        let path = dir.appendingPathComponent(name).path
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0)
        switch info.st_mode & S_IFMT {
        case S_IFLNK: files[name] = Data(("link to " + (try manager.destinationOfSymbolicLink(atPath: path))).utf8)
        case S_IFDIR: files[name] = Data("directory".utf8)
        case S_IFIFO: files[name] = Data("fifo".utf8)
        case S_IFCHR: files[name] = Data("character device \(info.st_rdev)".utf8)
        default: files[name] = try contents(path) + Data("mode \(info.st_mode & 0o7777)".utf8)
        }
    }
    return files
}

/// Gives the encrypted database at `path` (keyed with what `environment`
/// gives `--key-env KEY`) a 32-byte plaintext header with `dbcrypt header`,
/// and returns the salt it printed, in hex.
func givePlaintextHeader(_ path: String, environment: [String: String] = keyEnvironment,
                         file: StaticString = #filePath, line: UInt = #line) throws -> String {
    let run = try dbcrypt(["header", path, "--plaintext-header", "32", "--key-env", "KEY"], environment: environment)
    XCTAssertEqual(run.status, 0, run.stderr, file: file, line: line)
    return String(try XCTUnwrap(run.stdout.split(separator: "\n").first { $0.hasPrefix("salt: ") }, file: file, line: line).dropFirst(6))
}
