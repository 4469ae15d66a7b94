import DBCrypt
import Foundation
import XCTest

/// What the test helper's `continuous-backup-app` leaves, restored from its
/// backup at `path` (a state the app had): rows 1...n, each with its own
/// text, and the tally saying n, or no table yet. Returns n. The kill tests
/// of the directory's backup and of S3's check each restore with it.
public func checkBackupAppState(_ path: String, key: String, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
    var options = Database.Options()
    options.readOnly = true
    let db = try Database(path: path, key: .named(key), options: options)
    defer { db.close() }
    XCTAssertEqual(try db.integrityProblems(), [], file: file, line: line)
    // The state before the app made its tables.
    guard try db.fetchScalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name = 'item'") == 1 else { return 0 }
    let rows = try db.fetchScalar(Int.self, "SELECT count(*) FROM item") ?? 0
    XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT n FROM tally"), rows, file: file, line: line)
    XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT coalesce(max(id), 0) FROM item"), rows, file: file, line: line)
    XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM item WHERE body != 'row ' || id || hex(zeroblob(id % 300))"), 0,
                   file: file, line: line)
    return rows
}
