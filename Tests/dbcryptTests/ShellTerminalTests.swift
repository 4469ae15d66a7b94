import DBCrypt
import Foundation
import XCTest

/// `dbcrypt shell` in a real terminal (tmux): the key prompt without echo,
/// line editing, history, completion, Ctrl-C and Ctrl-D, and every
/// dot-command.
final class ShellTerminalTests: XCTestCase {
    var directory: URL!
    var path: String!

    override func setUpWithError() throws {
        directory = try makeTemporaryDirectory(self)
        path = directory.appendingPathComponent("app.db").path
        let made = try dbcrypt(["sql", path, "--create", "--key-env", "KEY", """
            CREATE TABLE inventory_items(sku TEXT, qty INTEGER);
            INSERT INTO inventory_items VALUES ('a-1', 5), ('b-2', 7), ('c-3', 0);
            CREATE INDEX inventory_by_qty ON inventory_items(qty);
            """], environment: keyEnvironment)
        XCTAssertEqual(made.status, 0, made.stderr)
    }

    private func start(_ arguments: [String], environment: [String: String] = keyEnvironment) throws -> TmuxTerminal {
        let terminal = try TmuxTerminal(dbcryptPath, ["shell", path] + arguments, environment: environment, directory: directory)
        addTeardownBlock { terminal.close() }
        return terminal
    }

    /// A command that prints nothing, typed then Enter; waits for the next prompt.
    private func runQuietly(_ terminal: TmuxTerminal, _ line: String) throws {
        try run(terminal, line, until: line + "\ndbcrypt> ")
    }

    /// The text typed at `dbcrypt> `, then Enter; waits for `until` on the screen.
    @discardableResult
    private func run(_ terminal: TmuxTerminal, _ line: String, until expected: String) throws -> String {
        try terminal.type(line)
        try terminal.press("Enter")
        return try terminal.waitFor(text: expected)
    }

    func testKeyPromptMultiLineStatementsHistoryCompletionAndCtrlD() throws {
        let terminal = try start([], environment: [:])
        try terminal.waitFor(text: "Key for \(path!): ")
        try terminal.type(keyText)
        try terminal.press("Enter")
        var screen = try terminal.waitFor(text: "dbcrypt> ")
        XCTAssertFalse(screen.contains(keyText), "the key was echoed")

        // A statement over two lines: the continuation prompt, then its row.
        // The terminal resized meanwhile (SIGWINCH during the read) changes nothing.
        try terminal.type("SELECT 40 +")
        try terminal.resize(columns: 100, rows: 30)
        try terminal.press("Enter")
        try terminal.waitFor(text: "   ...> ")
        try run(terminal, "2 AS answer;", until: "│     42 │")

        // The up arrow recalls the last line, which runs again.
        try run(terminal, "SELECT 'recall-' || 'me' AS r;", until: "│ recall-me │")
        try terminal.press("Up")
        try terminal.waitFor("the recalled line") { trimmed($0).hasSuffix("dbcrypt> SELECT 'recall-' || 'me' AS r;") }
        try terminal.press("Enter")
        try terminal.waitFor("the statement run twice") { $0.components(separatedBy: "│ recall-me │").count == 3 }

        // Tab completes a table's name.
        try terminal.type("SELECT sum(qty) AS total FROM inventory_i")
        try terminal.press("Tab")
        try terminal.waitFor(text: "FROM inventory_items ")
        try terminal.type(";")
        try terminal.press("Enter")
        screen = try terminal.waitFor(text: "│    12 │")
        XCTAssertTrue(screen.contains("SELECT sum(qty) AS total FROM inventory_items ;"), screen)

        // Ctrl-D at the prompt ends the session.
        try terminal.press("C-d")
        XCTAssertEqual(try terminal.waitForExit(), 0)
    }

    func testCtrlCStopsALongStatementWithinASecondAndTheSessionGoesOn() throws {
        let terminal = try start(["--key-env", "KEY"])
        try terminal.waitFor(text: "dbcrypt> ")
        // Ctrl-C at an empty prompt does nothing but say how to leave.
        try terminal.press("C-c")
        try terminal.waitFor(text: "Ctrl-C stops a running statement: .quit or Ctrl-D ends the session.")
        // Ctrl-C with a line typed drops the line, without the hint again.
        try terminal.type("SELECT 'dropped'")
        try terminal.press("C-c")
        try terminal.waitFor("a new prompt") { $0.hasSuffix("'dropped'\ndbcrypt> ") }

        try terminal.type("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;")
        try terminal.press("Enter")
        try terminal.waitFor("the statement typed") { $0.hasSuffix("FROM c;") }
        let pressed = Date()
        try terminal.press("C-c")
        try terminal.waitFor(text: "Error: interrupted", timeout: 5)
        let stoppedIn = Date().timeIntervalSince(pressed)
        XCTAssertLessThan(stoppedIn, 1.0, "Ctrl-C stopped the statement only after \(stoppedIn) s")
        try run(terminal, "SELECT 'still ' || 'usable' AS s;", until: "│ still usable │")
        try terminal.type(".quit")
        try terminal.press("Enter")
        XCTAssertEqual(try terminal.waitForExit(), 0)
    }

    /// `dbcrypt sql DB` with no SQL starts the shell on a terminal; `--version` names the engine.
    func testSQLWithoutSQLStartsTheShellOnATerminalAndVersionNamesTheEngine() throws {
        let terminal = try TmuxTerminal(dbcryptPath, ["sql", path, "--key-env", "KEY"], environment: keyEnvironment, directory: directory)
        addTeardownBlock { terminal.close() }
        try terminal.waitFor(text: "dbcrypt> ")
        try run(terminal, "SELECT count(*) AS n FROM inventory_items;", until: "│ 3 │")
        try terminal.type(".quit")
        try terminal.press("Enter")
        XCTAssertEqual(try terminal.waitForExit(), 0)

        let version = try dbcrypt(["--version"])
        XCTAssertEqual(version.status, 0, version.stderr)
        let library = try CipherInfo.linked()
        let lines = version.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, version.stdout)
        XCTAssertTrue(lines[0].hasPrefix("dbcrypt "), version.stdout)
        XCTAssertEqual(lines[1], "SQLCipher \(library.cipherVersion) on SQLite \(library.sqliteVersion)")
        XCTAssertTrue(lines[2].hasPrefix("crypto provider: \(library.provider)"), version.stdout)
        XCTAssertEqual(lines[2].contains("DBCrypt's own"), library.usesDBCryptProvider, version.stdout)
    }

    /// `dbcrypt sql DB "SQL"` on a terminal: a value that would clear the
    /// screen prints as ^[ (to a pipe it is data: SQLCommandTests).
    func testSQLOnATerminalPrintsControlCharactersEscaped() throws {
        let terminal = try TmuxTerminal(dbcryptPath, ["sql", path, "--key-env", "KEY", "SELECT 'x' || char(27) || '[2J' || 'y' AS e; SELECT 'still here'"],
                                        environment: keyEnvironment, directory: directory)
        addTeardownBlock { terminal.close() }
        let screen = try terminal.waitFor(text: "still here")
        XCTAssertTrue(screen.contains("x^[[2Jy"), screen)
        XCTAssertEqual(try terminal.waitForExit(), 0)
    }

    /// Each dot-command once, on the terminal.
    func testEveryDotCommandOnATerminal() throws {
        let script = directory.appendingPathComponent("script.sql").path
        try "SELECT 'from ' || 'the script' AS r;\n".write(toFile: script, atomically: true, encoding: .utf8)
        let csv = directory.appendingPathComponent("more.csv").path
        try "d-4,9\n".write(toFile: csv, atomically: true, encoding: .utf8)
        let out = directory.appendingPathComponent("out.txt").path
        let once = directory.appendingPathComponent("once.txt").path
        let backup = directory.appendingPathComponent("backup.db").path
        let terminal = try start(["--key-env", "KEY"], environment: keyEnvironment.merging(["PAGER": "sed 's/^/paged: /'"]) { $1 })
        try terminal.waitFor(text: "dbcrypt> ")
        try run(terminal, ".help", until: ".timer on|off")
        // .pager on: a result longer than the terminal goes through $PAGER, a short one does not.
        try runQuietly(terminal, ".pager on")
        try run(terminal, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 60) SELECT x FROM c;", until: "paged: │ 60 │")
        try run(terminal, "SELECT 'short' AS s;", until: "\n│ short │")
        XCTAssertFalse(try terminal.screen().contains("paged: │ short"))
        try runQuietly(terminal, ".pager off")
        try run(terminal, ".tables", until: "\ninventory_items\n")
        try run(terminal, ".schema inventory%", until: "CREATE INDEX inventory_by_qty ON inventory_items(qty);")
        try run(terminal, ".indexes", until: "\ninventory_by_qty\n")
        try run(terminal, ".read \(script)", until: "│ from the script │")
        try run(terminal, ".import \(csv) inventory_items", until: "dbcrypt> .import")
        for (mode, shows) in [("csv", "d-4,9\r"), ("json", "{\"sku\":\"d-4\",\"qty\":9}"), ("line", "sku: d-4"), ("list", "\nd-4|9"),
                              ("markdown", "| d-4 |   9 |"), ("table", "| d-4 |   9 |"), ("box", "│ d-4 │   9 │")] {
            try runQuietly(terminal, ".mode \(mode)")
            try run(terminal, "SELECT * FROM inventory_items WHERE sku = 'd-4';", until: shows.replacingOccurrences(of: "\r", with: ""))
        }
        // What the database holds cannot drive the terminal: an escape that would clear the screen shows as ^[.
        try run(terminal, "SELECT 'x' || char(27) || '[2J' || 'y' AS e;", until: "│ x^[[2Jy │")
        XCTAssertTrue(try terminal.screen().contains("│ d-4 │   9 │"), "the screen was cleared")
        // Headers given stay through a change of mode (which otherwise brings its own, as in sqlite3 3.53).
        try runQuietly(terminal, ".headers on")
        try runQuietly(terminal, ".mode list")
        try run(terminal, "SELECT * FROM inventory_items WHERE sku = 'd-4';", until: "sku|qty\nd-4|9")
        try runQuietly(terminal, ".headers off")
        try runQuietly(terminal, ".mode list")
        try runQuietly(terminal, ".nullvalue (none)")
        try run(terminal, "SELECT NULL;", until: "\n(none)\n")
        try runQuietly(terminal, ".output \(out)")
        try runQuietly(terminal, "SELECT 'to the file';")
        try runQuietly(terminal, ".output stdout")
        try runQuietly(terminal, ".once \(once)")
        try runQuietly(terminal, "SELECT 'once';")
        try run(terminal, "SELECT 'back';", until: "\nback\n")
        try runQuietly(terminal, ".timer on")
        try run(terminal, "SELECT 1;", until: "Run Time: real ")
        try runQuietly(terminal, ".timer off")
        try runQuietly(terminal, ".changes on")
        try run(terminal, "UPDATE inventory_items SET qty = qty + 1;", until: "changes: 4   total_changes: ")
        try runQuietly(terminal, ".changes off")
        try run(terminal, ".dump inventory_items", until: "COMMIT;")
        XCTAssertTrue(try terminal.screen().contains("Note: .dump writes the database as plaintext SQL."))
        // On the terminal, a dump's control characters print as ^[ too (to a file, .dump writes them as they are).
        try runQuietly(terminal, "CREATE TABLE shown(v); INSERT INTO shown VALUES ('x' || char(27) || '[2J' || 'y');")
        try run(terminal, ".dump shown", until: "INSERT INTO \"shown\" VALUES('x^[[2Jy');")
        try runQuietly(terminal, ".backup \(backup)")
        try run(terminal, ".cipher", until: "format: sqlcipher4")
        // .rekey asks twice, without echo.
        try terminal.type(".rekey")
        try terminal.press("Enter")
        try terminal.waitFor(text: "New key for \(path!): ")
        try terminal.type(otherKeyText)
        try terminal.press("Enter")
        try terminal.waitFor(text: "Repeat the key: ")
        try terminal.type(otherKeyText)
        try terminal.press("Enter")
        let screen = try terminal.waitFor(text: "Changed the key of \(path!).")
        XCTAssertFalse(screen.contains(otherKeyText), "the new key was echoed")
        try run(terminal, "SELECT count(*) AS n FROM inventory_items;", until: "\n4\n")
        // .bail on: the first error ends the session, with status 1.
        try runQuietly(terminal, ".bail on")
        try terminal.type("SELECT * FROM nowhere;")
        try terminal.press("Enter")
        XCTAssertEqual(try terminal.waitForExit(), 1)
        XCTAssertTrue(try terminal.screen().contains("Error: no such table: nowhere"))

        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), "to the file\n")
        XCTAssertEqual(try String(contentsOfFile: once, encoding: .utf8), "once\n")
        XCTAssertEqual(try Database(path: backup, key: testKey).fetchScalar(Int.self, "SELECT count(*) FROM inventory_items"), 4)
        XCTAssertEqual(try Database(path: path, key: otherKey).fetchScalar(Int.self, "SELECT sum(qty) FROM inventory_items"), 25)
    }
}

/// `dbcrypt shell --history`: what the shell writes to files, watched with
/// strace, holds no literal typed and no key, and the sealed history opens
/// in the next session under the key a `PRAGMA rekey` set.
final class ShellHistoryTests: XCTestCase {
    func testNoFileTheShellWritesHoldsALiteralOrAKeyAndTheHistoryReopens() throws {
        let directory = try makeTemporaryDirectory(self)
        let path = directory.appendingPathComponent("app.db").path
        XCTAssertEqual(try dbcrypt(["sql", path, "--create", "--key-env", "KEY", "CREATE TABLE t(v)"], environment: keyEnvironment).status, 0)
        let state = directory.appendingPathComponent("state").path
        let trace = directory.appendingPathComponent("writes.trace").path
        let environment = keyEnvironment.merging(["XDG_STATE_HOME": state]) { $1 }
        // Every write of the shell and its threads, each file descriptor named (-y).
        let traced = try TmuxTerminal("/usr/bin/strace", [
            "-f", "-qq", "-y", "-e", "trace=write,pwrite64,writev,pwritev,pwritev2", "-s", "1000000", "-o", trace,
            dbcryptPath, "shell", path, "--key-env", "KEY", "--history",
        ], environment: environment, directory: directory)
        addTeardownBlock { traced.close() }
        let literals = ["literal-alpha-7731", "literal-beta-9902", "literal-gamma-4410"]
        try traced.waitFor(text: "dbcrypt> ")
        for statement in ["INSERT INTO t VALUES ('\(literals[0])');", "SELECT '\(literals[1])' AS v;",
                          "PRAGMA rekey = \"\(otherKeyText)\";", "SELECT v || '\(literals[2])' AS w FROM t;"] {
            try traced.type(statement)
            try traced.press("Enter")
            try traced.waitFor("\(statement) run") { $0.hasSuffix("\ndbcrypt> ") && $0.contains(statement) }
        }
        try traced.press("C-d")
        XCTAssertEqual(try traced.waitForExit(), 0)

        let writes = try String(decoding: Data(contentsOf: URL(fileURLWithPath: trace)), as: UTF8.self)
        // Writes to files: the descriptor names a path (not the terminal, a pipe or a socket).
        let fileWrites = writes.split(separator: "\n").filter { line in
            guard let open = line.range(of: "write64(") ?? line.range(of: "write(") ?? line.range(of: "writev(") ?? line.range(of: "writev2(") else { return false }
            let target = line[open.upperBound...].drop { $0.isNumber }
            return target.hasPrefix("</") && !target.hasPrefix("</dev/")
        }
        let historyFolder = state + "/dbcrypt/history/"
        XCTAssertTrue(fileWrites.contains { $0.contains(historyFolder) }, "the trace saw no write of the history")
        XCTAssertTrue(fileWrites.contains { $0.contains(path) }, "the trace saw no write of the database")
        let keyHex = String(otherKeyText.dropFirst(2).dropLast())
        for line in fileWrites {
            for secret in literals + testSecrets + [keyHex, "rekey", "PRAGMA"] {
                XCTAssertFalse(line.contains(secret), "\(secret) was written to a file: \(line.prefix(200))")
            }
        }
        let kept = try FileManager.default.contentsOfDirectory(atPath: historyFolder)
        XCTAssertEqual(kept.count, 1, "one sealed history: \(kept)")
        let sealed = try Data(contentsOf: URL(fileURLWithPath: historyFolder + kept[0]))
        for secret in literals { XCTAssertNil(sealed.range(of: Data(secret.utf8))) }

        // The next session, under the key PRAGMA rekey set: the up arrow
        // recalls the last statement, and the rekey was never recorded.
        let next = try TmuxTerminal(dbcryptPath, ["shell", path, "--key-env", "OTHER", "--history"], environment: environment, directory: directory)
        addTeardownBlock { next.close() }
        try next.waitFor(text: "dbcrypt> ")
        try next.press("Up")
        try next.waitFor("the last statement recalled") { trimmed($0).hasSuffix("dbcrypt> SELECT v || '\(literals[2])' AS w FROM t;") }
        try next.press("Up")
        try next.waitFor("the one before it, not the rekey") { trimmed($0).hasSuffix("dbcrypt> SELECT '\(literals[1])' AS v;") }
        try next.press("Enter")
        try next.waitFor(text: "│ \(literals[1]) │")
        try next.press("C-d")
        XCTAssertEqual(try next.waitForExit(), 0)
        XCTAssertFalse(try next.screen().contains("does not open with this key"))
    }
}

/// The screen without the blanks a line editor leaves at its end when it
/// redraws a longer line with a shorter one.
private func trimmed(_ screen: String) -> String {
    String(screen.reversed().drop { $0 == " " }.reversed())
}
