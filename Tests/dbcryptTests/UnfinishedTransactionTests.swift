import DBCrypt
import Foundation
import XCTest

/// A database that a process stopped in the middle of a commit: some pages
/// already overwritten, the originals in a hot `-journal`. A read-write
/// connection rolls it back by itself; a read-only one cannot.
final class UnfinishedTransactionTests: XCTestCase {
    var dir: URL!
    let key = testKey

    override func setUpWithError() throws {
        dir = try makeTemporaryDirectory(self)
    }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// An encrypted database at `path`, and beside it the hot journal of an
    /// UPDATE of every title that had already written pages to the file:
    /// copied while the transaction was open, which is what a kill leaves.
    private func makeInterruptedDatabase(_ path: String) throws {
        let plain = path + ".plain"
        try makePlaintextDatabase(plain, rows: 3000)
        try DatabaseEncryption.encrypt(plain, to: path + ".building", key: key)
        try FileManager.default.removeItem(atPath: plain)
        let db = try Database(path: path + ".building", key: key)
        try db.execute("PRAGMA cache_size = 4; BEGIN IMMEDIATE; UPDATE note SET title = 'not committed'")
        try FileManager.default.copyItem(atPath: path + ".building", toPath: path)
        try FileManager.default.copyItem(atPath: path + ".building-journal", toPath: path + "-journal")
        try db.execute("ROLLBACK")
        db.close()
        try FileManager.default.removeItem(atPath: path + ".building")
        XCTAssertNotEqual(try contents(path).count, 0)
        XCTAssertNotEqual(try contents(path + "-journal").prefix(8), Data(count: 8), "the journal is not hot: the test proves little")
    }

    /// Every title as committed: none says "not committed".
    private func assertCommittedState(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        var options = Database.Options()
        options.readOnly = true
        let db = try Database(path: path, key: key, options: options)
        XCTAssertEqual(try db.fetchScalar(String.self, "PRAGMA integrity_check"), "ok", file: file, line: line)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM note WHERE title = 'not committed'"), 0, file: file, line: line)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM note"), 3000, file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-journal"), file: file, line: line)
    }

    /// The library's read-only open rolls it back first, and says so; once
    /// rolled back, there is nothing more to say.
    func testOpenReadOnlyRollsItBackFirstAndSaysSo() throws {
        try makeInterruptedDatabase(path("app.db"))
        var said = 0
        let db = try Database.openReadOnly(path: path("app.db"), key: key) { said += 1 }
        XCTAssertEqual(said, 1)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM note WHERE title = 'not committed'"), 0)
        db.close()
        try assertCommittedState(path("app.db"))
        try Database.openReadOnly(path: path("app.db"), key: key) { said += 1 }.close()
        XCTAssertEqual(said, 1)
    }

    func testAReadOnlyConnectionNamesItAndAReadWriteOneRollsItBack() throws {
        try makeInterruptedDatabase(path("app.db"))
        let before = (try contents(path("app.db")), try contents(path("app.db-journal")))
        var readOnly = Database.Options()
        readOnly.readOnly = true
        XCTAssertThrowsError(try Database(path: path("app.db"), key: key, options: readOnly)) { error in
            guard case DatabaseError.unfinishedTransaction(path("app.db")) = error else { return XCTFail("\(error)") }
            XCTAssertTrue("\(error)".contains("open it once with write access"), "\(error)")
        }
        XCTAssertEqual(try contents(path("app.db")), before.0)
        XCTAssertEqual(try contents(path("app.db-journal")), before.1)

        // The wrong key still rolls the journal back: it holds the pages as encrypted on disk.
        XCTAssertThrowsError(try Database(path: path("app.db"), key: otherKey))
        try assertCommittedState(path("app.db"))
    }

    func testCheckInfoAndRekeyRollItBackAndSaySo() throws {
        for command in ["check", "info", "rekey"] {
            let file = path("\(command).db")
            try makeInterruptedDatabase(file)
            var arguments = [command, file, "--key-env", "KEY"]
            if command == "rekey" { arguments += ["--new-key-env", "OTHER"] }
            let run = try dbcrypt(arguments, environment: keyEnvironment)
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(run.stderr, "dbcrypt: note: rolled back a transaction that a stopped process left unfinished in \(file).\n")
            if command != "rekey" { try assertCommittedState(file) }
        }
        let rekeyed = try Database(path: path("rekey.db"), key: otherKey)
        XCTAssertEqual(try rekeyed.fetchScalar(Int.self, "SELECT count(*) FROM note WHERE title = 'not committed'"), 0)
    }

    func testWithoutWriteAccessEveryCommandSaysWhatToDoAndChangesNothing() throws {
        try skipUnless(geteuid() == 0, "reading as another user needs root")
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: false)
        XCTAssertEqual(chmod(out.path, 0o777), 0)
        XCTAssertEqual(chmod(dir.path, 0o755), 0)
        try makeInterruptedDatabase(path("app.db"))
        for file in ["app.db", "app.db-journal"] { XCTAssertEqual(chmod(path(file), 0o644), 0) }
        let before = (try contents(path("app.db")), try contents(path("app.db-journal")))

        for arguments in [["check", path("app.db")], ["info", path("app.db")],
                          ["decrypt", path("app.db"), "-o", out.appendingPathComponent("p.db").path],
                          ["sql", path("app.db"), "SELECT count(*) FROM note"]] {
            let run = try dbcrypt(arguments + ["--key-env", "KEY"], environment: keyEnvironment, as: 65534)
            XCTAssertEqual(run.status, 1, "\(arguments[0]): \(run.stderr)")
            XCTAssertEqual(run.stderr, "dbcrypt: " + DatabaseError.unfinishedTransaction(path: path("app.db")).description + "\n", arguments[0])
        }
        XCTAssertEqual(try contents(path("app.db")), before.0)
        XCTAssertEqual(try contents(path("app.db-journal")), before.1)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path), [])

        // A file the user may write, in a directory where the journal cannot
        // be deleted: the same advice, not a half-done rollback.
        for file in ["app.db", "app.db-journal"] { XCTAssertEqual(chown(path(file), 65534, 65534), 0) }
        let check = try dbcrypt(["check", path("app.db"), "--key-env", "KEY"], environment: keyEnvironment, as: 65534)
        XCTAssertEqual(check.status, 1, check.stderr)
        XCTAssertEqual(check.stderr, "dbcrypt: " + DatabaseError.unfinishedTransaction(path: path("app.db")).description + "\n")
        XCTAssertEqual(try contents(path("app.db")), before.0)
        XCTAssertEqual(try contents(path("app.db-journal")), before.1)
    }
}
