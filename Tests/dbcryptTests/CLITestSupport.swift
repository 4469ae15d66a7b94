import DBCrypt
import Foundation
import XCTest
@_exported import TestSupport

/// Every secret the end-to-end tests use: no run may show one in its
/// arguments, its output or its errors.
let testSecrets = ["cli-secret-passphrase", "cli-other-passphrase", "0123abcd0123abcd", "0123ABCD0123ABCD"]
let passphrase = testSecrets[0]
let otherPassphrase = testSecrets[1]
let rawKeyHex = String(repeating: "0123abcd", count: 8)

/// What one run of `dbcrypt` did.
struct Run {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// The `dbcrypt` binary, built beside the test bundle.
let dbcryptPath = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    .appendingPathComponent("dbcrypt").path

/// Runs `dbcrypt` with `arguments`, `environment` added to this process's,
/// the variables in `removing` taken away, and no terminal (standard input
/// is `input`, or empty, or `standardInput`; standard output a pipe, or
/// `standardOutput`); as `user` when given (which needs root). Checks that no secret appears
/// in the arguments or in anything printed.
@discardableResult
func dbcrypt(_ arguments: [String], environment: [String: String] = [:], removing: [String] = [], in directory: URL? = nil,
             as user: uid_t? = nil, input: Data? = nil, standardInput: FileHandle? = nil, standardOutput: FileHandle? = nil,
             file: StaticString = #filePath, line: UInt = #line) throws -> Run {
    let process = Process()
    if let user {
        // setpriv (util-linux) runs it as another user, with that user's group and no others.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", dbcryptPath] + arguments
    } else {
        process.executableURL = URL(fileURLWithPath: dbcryptPath)
        process.arguments = arguments
    }
    if let directory { process.currentDirectoryURL = directory }
    var env = ProcessInfo.processInfo.environment
    env.merge(environment) { $1 }
    for name in removing { env[name] = nil }
    process.environment = env
    let output = Pipe(), errors = Pipe(), stdin = Pipe()
    process.standardInput = standardInput ?? (input == nil ? FileHandle.nullDevice : stdin)
    process.standardOutput = standardOutput ?? output
    process.standardError = errors
    try process.run()
    if let input {
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
    }
    if standardOutput != nil { try output.fileHandleForWriting.close() }   // else the read below never ends
    let out = output.fileHandleForReading.readDataToEndOfFile()
    let err = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let run = Run(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                  stderr: String(decoding: err, as: UTF8.self))
    for secret in testSecrets {
        for text in arguments + [run.stdout, run.stderr] {
            XCTAssertFalse(text.contains(secret), "a key appeared in: \(text.prefix(200))", file: file, line: line)
        }
    }
    return run
}

/// The environment that gives `dbcrypt --key-env KEY` the test passphrase.
let keyEnvironment = ["KEY": passphrase, "OTHER": otherPassphrase]

/// A plaintext database with two tables and `rows` notes.
func makePlaintextDatabase(_ path: String, rows: Int = 200) throws {
    let db = try Database(path: path)
    try db.execute("""
        CREATE TABLE author(id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE note(id INTEGER PRIMARY KEY, author_id INTEGER, title TEXT, body BLOB, score REAL);
        INSERT INTO author(name) VALUES ('Ada'), ('Grace');
        PRAGMA user_version = 3;
        """)
    try db.inTransaction { db in
        for i in 0..<rows {
            try db.execute("INSERT INTO note(author_id, title, body, score) VALUES (?, ?, ?, ?)",
                           [i % 2 + 1, "title, \"quoted\" \(i)", Data([UInt8(i % 256), 0, 1]), Double(i) / 4])
        }
    }
    db.close()
}

/// The bytes of a file, to prove it unchanged.
func contents(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

/// Starts `dbcrypt` with `arguments` and `environment` added to this
/// process's, its output discarded: for the tests that kill it mid-way.
func startDbcrypt(_ arguments: [String], environment: [String: String]) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: dbcryptPath)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
}

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

/// Gives the encrypted database at `path` (keyed with the test passphrase)
/// a 32-byte plaintext header with `dbcrypt header`, and returns the salt
/// it printed, in hex.
func givePlaintextHeader(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
    let run = try dbcrypt(["header", path, "--plaintext-header", "32", "--key-env", "KEY"], environment: keyEnvironment)
    XCTAssertEqual(run.status, 0, run.stderr, file: file, line: line)
    return String(try XCTUnwrap(run.stdout.split(separator: "\n").first { $0.hasPrefix("salt: ") }, file: file, line: line).dropFirst(6))
}
