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
