import Foundation
import XCTest
import DBCrypt

// The README's Records example, compiled and run: keep the two the same.
private struct Player: Record, Equatable {
    static let databaseTableName = "player"
    static let databaseColumnNaming = ColumnNaming.snakeCase   // displayName <-> display_name
    var id: Int64?                 // INTEGER PRIMARY KEY: nil until inserted
    var displayName: String
    var score: Int
    var lastSeen: Date?
    mutating func didInsert(rowID: Int64) { id = rowID }
}

final class RecordReadmeExampleTests: XCTestCase {
    func testTheREADMEExampleRunsOnAnEncryptedQueue() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("readme.db").path
        let queue = try DatabaseQueue(path: path, key: try DatabaseKey(rawKey: [UInt8](repeating: 5, count: 32)))

        try queue.write { db in
            try db.execute("CREATE TABLE player(id INTEGER PRIMARY KEY, display_name TEXT NOT NULL, score INTEGER NOT NULL, last_seen TEXT)")
            var ada = Player(id: nil, displayName: "Ada", score: 10, lastSeen: nil)
            try ada.insert(db)                               // ada.id is now set
            try ada.updateChanges(db) { $0.score += 5 }      // UPDATE player SET score = ? WHERE id = ?
            let again = try Player.fetchOne(db, key: ada.id!)
            let best = try Player.fetchAll(db, where: "score > ? ORDER BY score DESC", [12])
            assert(again == ada && best == [ada])
            XCTAssertEqual(again, ada)
            XCTAssertEqual(best, [ada])
            XCTAssertEqual(ada.score, 15)
        }
        // The example's code is the README's, line for line.
        let readme = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../README.md").standardizedFileURL, encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        for line in readme.components(separatedBy: "\n")
            where line.contains("try ada.") || line.contains("static let databaseColumnNaming") || line.contains("let best = ") {
            XCTAssertTrue(source.contains(line.trimmingCharacters(in: .whitespaces)), line)
        }
    }
}
