import DBCrypt
import DBCryptKeyStore
import Foundation
import XCTest
@_exported import TestFixtures

/// A service name no other test (or earlier run) uses.
func uniqueService(_ test: String = #function) -> String {
    "dbcrypt-test-\(test.prefix { $0 != "(" })-\(UUID().uuidString.prefix(8))"
}

/// Runs the helper's key store commands in a child process, with
/// `environment` added to this process's and the variables in `removing`
/// taken away: exit status and what it printed.
func runHelper(_ arguments: [String], environment: [String: String] = [:], removing: [String] = []) throws -> (Int32, String, String) {
    try runProgram(testHelperPath, arguments, environment: environment, removing: removing)
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
    // They share one standard input: closing it starts them all at once.
    let start = Pipe()
    let children = try (0..<4).map { _ in
        try ChildProcess(testHelperPath, ["key-store-race", store, item, path], environment: environment,
                         standardInput: start.fileHandleForReading, standardOutput: .discarded, standardError: .to(FileHandle.standardError))
    }
    try start.fileHandleForReading.close()
    try start.fileHandleForWriting.close()
    for child in children {
        XCTAssertEqual(child.finish().status, 0, "a child did not open the database with the key it loaded", file: file, line: line)
    }
    try assertOpens(path, with: storedKey(), rows: 4, file: file, line: line)
}

/// A database at `path` encrypted with `key`, with an empty table `opener`.
func makeOpenerDatabase(_ path: String, key: DatabaseKey) throws {
    try TestFixtures.makeDatabase(path, key: key, schema: "CREATE TABLE opener(pid INTEGER)").close()
}
