import Foundation
import XCTest
@testable import DBCrypt
@_exported import TestFixtures

/// Whether `needle` occurs anywhere in the file's bytes.
func file(_ path: String, contains needle: String) throws -> Bool {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return data.range(of: Data(needle.utf8)) != nil
}

/// The first `count` bytes of a file.
func fileHeader(_ path: String, count: Int = 16) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(count))
}

/// A new database in a temporary directory, keyed with a raw key, which
/// skips the passphrase's key derivation (fast); `sql` runs first.
func makeRawKeyedDatabase(_ test: XCTestCase, _ name: String, _ sql: String) throws -> Database {
    let path = try makeTemporaryDirectory(test).appendingPathComponent(name).path
    let db = try Database(path: path, key: try DatabaseKey(rawKey: [UInt8](repeating: 9, count: 32)))
    try db.execute(sql)
    return db
}
