import Foundation
import XCTest
@testable import DBCrypt

/// A pool copies its WAL into the database file on a connection and thread
/// of its own: the commit that fills the WAL does not wait for the copy, the
/// copy still happens, and the work that needs no checkpoint running (a
/// truncating checkpoint, a key change) gets none.
final class BackgroundCheckpointTests: XCTestCase {
    let key = try! DatabaseKey(rawKey: (0..<32).map { UInt8($0) })
    var path: String!
    var directory: URL!

    override func setUpWithError() throws {
        directory = try makeTemporaryDirectory(self)
        path = directory.appendingPathComponent("pool.db").path
    }

    private func makePool() throws -> DatabasePool {
        try TestFixtures.makePool(path, key: key, schema: "CREATE TABLE IF NOT EXISTS note(id INTEGER PRIMARY KEY, body TEXT)")
    }

    /// Commits of one page-sized row each until the WAL's run holds `frames`
    /// frames, or a checkpoint started it over. Returns how many rows it wrote.
    @discardableResult
    private func fillTheWAL(_ pool: DatabasePool, frames: Int = 1_000) throws -> Int {
        var rows = 0
        let run = walRun().salts
        repeat {
            try pool.write { db in try db.execute("INSERT INTO note(body) VALUES (?)", [String(repeating: "n", count: 3_000)]) }
            rows += 1
        } while walRun().frames < frames && (run.isEmpty || walRun().salts == run)
        return rows
    }

    /// The WAL's salts and the frames of its current run: those that carry
    /// the header's salts (a restarted WAL keeps its size, and the frames of
    /// the run before it, with other salts, after the new ones).
    private func walRun() -> (salts: [UInt8], frames: Int) {
        guard let handle = FileHandle(forReadingAtPath: path + "-wal") else { return ([], 0) }
        defer { try? handle.close() }
        func read(_ offset: Int, _ count: Int) -> [UInt8] {
            guard (try? handle.seek(toOffset: UInt64(offset))) != nil else { return [] }
            return [UInt8]((try? handle.read(upToCount: count)) ?? Data())
        }
        let salts = read(16, 8), frameSize = 24 + 4096
        guard salts.count == 8, let end = try? handle.seekToEnd() else { return ([], 0) }
        // The run is a prefix: search for its end.
        var low = 0, high = (Int(end) - 32) / frameSize
        while low < high {
            let middle = (low + high + 1) / 2
            if read(32 + (middle - 1) * frameSize + 8, 8) == salts { low = middle } else { high = middle - 1 }
        }
        return (salts, low)
    }

    private func walFrames() -> Int { walRun().frames }

    /// The rows the database file holds by itself, without its WAL: what
    /// checkpoints have copied into it. Read from a copy, opened with `key`.
    private func rowsInTheFileAlone(key: DatabaseKey? = nil) -> Int? {
        let copy = directory.appendingPathComponent("alone-\(UUID().uuidString).db").path
        defer { try? FileManager.default.removeItem(atPath: copy) }
        guard (try? FileManager.default.copyItem(atPath: path, toPath: copy)) != nil,
              let db = try? Database(path: copy, key: key ?? self.key, options: { var o = Database.Options(); o.readOnly = true; return o }())
        else { return nil }
        guard (try? db.fetchScalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name = 'note'")) == 1 else { return 0 }
        return try? db.fetchScalar(Int.self, "SELECT count(*) FROM note")
    }

    /// Waits (up to 20 s) until the file alone holds `rows` notes.
    private func waitForTheFileAlone(toHold rows: Int, key: DatabaseKey? = nil, file: StaticString = #filePath, line: UInt = #line) {
        var seen: Int?
        if waitUntil(timeout: 20, every: 0.02, { seen = rowsInTheFileAlone(key: key); return seen == rows }) { return }
        XCTFail("the database file alone holds \(seen.map(String.init) ?? "no readable") rows, not \(rows)", file: file, line: line)
    }

    /// While the checkpointer is held, the commits that fill the WAL past
    /// 1,000 frames return without copying it (SQLite's own checkpoint, in
    /// the commit, would have); once released, it copies every row.
    func testTheCommitThatFillsTheWALDoesNotCheckpointAndTheCheckpointerDoes() throws {
        let pool = try makePool()
        let rows = try pool.checkpointer.paused {
            let rows = try fillTheWAL(pool, frames: 1_050)
            XCTAssertGreaterThan(walFrames(), 1_000)
            XCTAssertEqual(rowsInTheFileAlone(), 0, "a commit checkpointed")
            return rows
        }
        waitForTheFileAlone(toHold: rows)
        // Once the checkpoint is done (it copies the pages, then records
        // that it did), the next write starts the WAL over.
        pool.checkpointer.paused {}
        try pool.write { db in try db.execute("INSERT INTO note(body) VALUES ('after')") }
        XCTAssertLessThan(walFrames(), 10)
        XCTAssertEqual(try pool.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM note") }, rows + 1)
    }

    /// While the WAL cannot start over (here a read holds its snapshot, as
    /// writes without pause would), a checkpoint runs every 1,000 frames,
    /// not after every commit: each would sync the disk twice for nothing.
    func testWhileTheWALCannotStartOverACheckpointRunsEvery1000Frames() throws {
        let pool = try makePool()
        let reading = DispatchSemaphore(value: 0), finish = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? pool.read { db in
                reading.signal()
                finish.wait()
            }
            done.signal()
        }
        reading.wait()
        try fillTheWAL(pool, frames: 3_600)
        finish.signal()
        done.wait()
        XCTAssertGreaterThanOrEqual(walFrames(), 3_600, "the WAL started over")
        pool.checkpointer.paused {}
        // Fewer than 3 when its thread waited for a core; never one per commit.
        XCTAssertTrue((1...4).contains(pool.checkpointer.checkpointsRun), "\(pool.checkpointer.checkpointsRun) checkpoints")
    }

    /// A truncating checkpoint asked for just after the writes that started
    /// a background one waits for it instead of failing with SQLITE_BUSY.
    func testATruncatingCheckpointRightAfterABackgroundOneEmptiesTheWAL() throws {
        let pool = try makePool()
        var rows = 0
        for _ in 0..<4 {
            rows += try fillTheWAL(pool)
            XCTAssertTrue(try pool.checkpoint(.truncate))
            XCTAssertEqual(walFrames(), 0)
        }
        XCTAssertEqual(rowsInTheFileAlone(), rows)
    }

    /// After a key change, background checkpoints copy into the new file,
    /// which opens with the new key alone: the checkpointing connection,
    /// opened with the old key on the old file, was closed and reopened.
    func testAfterAKeyChangeTheCheckpointerCopiesIntoTheNewFile() throws {
        let pool = try makePool()
        let before = try fillTheWAL(pool)
        waitForTheFileAlone(toHold: before)
        let newKey = try DatabaseKey(rawKey: (0..<32).map { UInt8(255 - $0) })
        try pool.changeKey(to: newKey)
        let after = try fillTheWAL(pool)
        waitForTheFileAlone(toHold: before + after, key: newKey)
        try pool.close()
        XCTAssertEqual(try Database(path: path, key: newKey).fetchScalar(Int.self, "SELECT count(*) FROM note"), before + after)
    }

    /// A writer kept past its pool (returned from a write closure) still
    /// commits past 1,000 frames: its WAL hook's context lives as long as
    /// the connection, and with no pool to open a checkpointing connection
    /// for it, the commit checkpoints itself.
    func testAWriterKeptPastItsPoolStillCheckpoints() throws {
        var pool: DatabasePool? = try makePool()
        let writer = try pool!.writeWithoutTransaction { $0 }
        pool = nil
        // 3 frames a commit: the 1,000th frame comes near the 333rd commit,
        // and the writer's own RESTART (4,000 frames) not before the 1,300th.
        var checkpointed = 0
        for rows in 1...1_000 {
            try writer.inTransaction(.immediate) { db in
                try db.execute("INSERT INTO note(body) VALUES (?)", [String(repeating: "n", count: 3_000)])
            }
            if rows % 50 == 0, let alone = rowsInTheFileAlone(), alone > 0 {
                checkpointed = alone
                break
            }
        }
        XCTAssertGreaterThan(checkpointed, 0, "no checkpoint in 1,000 commits")
        writer.close()
    }

    /// Closing the pool waits for a background checkpoint and closes its
    /// connection: the WAL is gone, as when the writer was the last connection.
    func testClosingLeavesNoWAL() throws {
        let pool = try makePool()
        let rows = try fillTheWAL(pool)
        try pool.close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"))
        XCTAssertEqual(try Database(path: path, key: key).fetchScalar(Int.self, "SELECT count(*) FROM note"), rows)
    }
}
