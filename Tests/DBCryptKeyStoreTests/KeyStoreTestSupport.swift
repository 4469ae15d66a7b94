import DBCrypt
import DBCryptKeyStore
import Foundation
import XCTest
@_exported import TestSupport

/// The test helper, built beside the test bundle.
let helperPath = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    .appendingPathComponent("DBCryptTestHelper").path

/// A service name no other test (or earlier run) uses.
func uniqueService(_ test: String = #function) -> String {
    "dbcrypt-test-\(test.prefix { $0 != "(" })-\(UUID().uuidString.prefix(8))"
}

/// Runs the helper's key store commands in a child process, with
/// `environment` added to this process's and the variables in `removing`
/// taken away: exit status and what it printed.
func runHelper(_ arguments: [String], environment: [String: String] = [:], removing: [String] = []) throws -> (Int32, String, String) {
    try TestSupport.run("/usr/bin/env", removing.flatMap { ["-u", $0] } + environment.map { "\($0)=\($1)" } + [helperPath] + arguments)
}

/// Asserts that `database` opens with `key` and holds a table of `rows` rows.
func assertOpens(_ database: String, with key: DatabaseKey, rows: Int, file: StaticString = #filePath, line: UInt = #line) throws {
    let db = try Database(path: database, key: key)
    XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM opener"), rows, file: file, line: line)
    db.close()
}

/// Asserts that `body` throws the KeyStoreError `expected`.
func assertThrows(_ expected: KeyStoreError, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) {
    XCTAssertThrowsError(try body(), file: file, line: line) { error in
        XCTAssertEqual(error as? KeyStoreError, expected, file: file, line: line)
    }
}

/// Four helper processes that race on the first launch of `item` in
/// `store` (`secret-service` or `kernel`), each opening (or making) the
/// database at `path` with the key it got and adding a row: every one
/// succeeds and the database then opens with what the store holds, or two
/// of them kept keys of their own.
func assertRacersEndUpWithOneKey(store: String, item: String, database path: String, environment: [String: String] = [:],
                                 storedKey: () throws -> DatabaseKey, file: StaticString = #filePath, line: UInt = #line) throws {
    let children = (0..<4).map { _ in
        let process = Process()
        process.executableURL = URL(fileURLWithPath: helperPath)
        process.arguments = ["key-store-race", store, item, path]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        return process
    }
    for child in children { try child.run() }
    XCTAssertTrue(FileManager.default.createFile(atPath: path + ".go", contents: nil))
    for child in children {
        child.waitUntilExit()
        XCTAssertEqual(child.terminationStatus, 0, "a child did not open the database with the key it loaded", file: file, line: line)
    }
    try assertOpens(path, with: storedKey(), rows: 4, file: file, line: line)
}

/// A database at `path` encrypted with `key`, with an empty table `opener`.
func makeDatabase(_ path: String, key: DatabaseKey) throws {
    let db = try Database(path: path, key: key)
    try db.execute("CREATE TABLE opener(pid INTEGER)")
    db.close()
}
