import Foundation
import XCTest
@testable import DBCrypt
@_exported import TestSupport

/// Whether `needle` occurs anywhere in the file's bytes.
func file(_ path: String, contains needle: String) throws -> Bool {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return data.range(of: Data(needle.utf8)) != nil
}

/// The first `count` bytes of a file.
func fileHeader(_ path: String, count: Int = 16) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(count))
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
