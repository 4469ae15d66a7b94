import Foundation
import XCTest
@testable import DBCrypt

/// A fresh directory under the system's temporary directory, removed at the end of the test.
func makeTemporaryDirectory(_ test: XCTestCase) throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("dbcrypt-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
}

/// Whether `needle` occurs anywhere in the file's bytes.
func file(_ path: String, contains needle: String) throws -> Bool {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return data.range(of: Data(needle.utf8)) != nil
}

/// The first `count` bytes of a file.
func fileHeader(_ path: String, count: Int = 16) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(count))
}

/// Runs Debian's `sqlcipher` shell on `path` with `script` on its standard
/// input (so keys never reach its arguments) and returns what it printed.
/// Fails the test when the shell is missing or exits non-zero.
@discardableResult
func runSQLCipherShell(_ path: String, _ script: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
    let shell = "/usr/bin/sqlcipher"
    guard FileManager.default.isExecutableFile(atPath: shell) else {
        XCTFail("the sqlcipher shell is not installed: run scripts/bootstrap", file: file, line: line)
        return ""
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: shell)
    process.arguments = ["-batch", "-bail", path]
    let input = Pipe(), output = Pipe(), errors = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    input.fileHandleForWriting.write(Data(script.utf8))
    try input.fileHandleForWriting.close()
    let printed = output.fileHandleForReading.readDataToEndOfFile()
    let complaint = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let errorText = String(decoding: complaint, as: UTF8.self)
    XCTAssertEqual(process.terminationStatus, 0, "sqlcipher shell failed: \(errorText)", file: file, line: line)
    XCTAssertEqual(errorText, "", file: file, line: line)
    return String(decoding: printed, as: UTF8.self)
}

/// The test helper executable, built beside the test bundle.
let testHelperPath: String = {
    let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    return directory.appendingPathComponent("DBCryptTestHelper").path
}()

/// Starts the test helper with `arguments` and the keys in its environment.
func startTestHelper(_ arguments: [String], keys: [String: String]) throws -> (Process, Pipe) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: testHelperPath)
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment.merge(keys) { $1 }
    process.environment = environment
    let errors = Pipe()
    process.standardOutput = FileHandle.nullDevice
    process.standardError = errors
    try process.run()
    return (process, errors)
}
