import DBCrypt
import Foundation
import XCTest

/// `dbcrypt shell` and `dbcrypt sql` with no SQL, reading a script from
/// standard input: the sqlite3 shell's output and dot-commands, bad input
/// as one line with the session going on.
final class ShellScriptTests: XCTestCase {
    var directory: URL!
    var path: String!

    override func setUpWithError() throws {
        directory = try makeTemporaryDirectory(self)
        path = directory.appendingPathComponent("app.db").path
        // SQLCipher 3's format: the 3.4.1 engine's shell reads it too.
        let made = try dbcrypt(["sql", path, "--create", "--format", "sqlcipher3", "--key-env", "KEY", """
            CREATE TABLE t(id INTEGER PRIMARY KEY, n, r, s, b);
            INSERT INTO t VALUES (1, 42, 0.1 + 0.2, 'plain', x'414243');
            INSERT INTO t VALUES (2, -7, 1e20, 'comma, "quote" and ''apostrophe''', NULL);
            INSERT INTO t VALUES (3, NULL, 2.5, 'two
            lines', x'');
            INSERT INTO t VALUES (4, 9223372036854775807, 1.0, 'é and tab	here', 'text');
            INSERT INTO t VALUES (5, 0, -0.000123, '', 3);
            CREATE INDEX t_n ON t(n);
            CREATE VIEW v AS SELECT id, s FROM t;
            """], environment: keyEnvironment)
        XCTAssertEqual(made.status, 0, made.stderr)
    }

    private func shell(_ script: String, _ extra: [String] = [], command: String = "shell") throws -> Run {
        try dbcrypt([command, path, "--key-env", "KEY"] + extra, environment: keyEnvironment, input: Data(script.utf8))
    }

    /// The same script through dbcrypt and through the engine's own
    /// `sqlcipher` shell prints the same bytes in CSV (every engine) and
    /// JSON (the 4.x shells: 3.4.1's has no JSON mode), with and without
    /// headers. Blobs are left out of JSON, where the shells of SQLite 3.46
    /// and 3.53 differ.
    func testScriptsPrintWhatTheEnginesShellPrints() throws {
        var modes = ["csv"]
        if shellIsSQLCipher4 { modes.append("json") }
        for mode in modes {
            for headers in ["on", "off"] {
                let columns = mode == "json" ? "id, n, r, s" : "*"
                let script = """
                    .mode \(mode)
                    .headers \(headers)
                    SELECT \(columns) FROM t ORDER BY id;
                    SELECT count(*) AS rows, sum(r) AS total, group_concat(s, '|') AS joined FROM t;
                    SELECT * FROM v WHERE id > 3;
                    SELECT 1 WHERE 0;

                    """
                let ours = try shell(script, command: "sql")
                XCTAssertEqual(ours.status, 0, ours.stderr)
                XCTAssertEqual(ours.stderr, "")
                let theirs = try runSQLCipherShell(path, "PRAGMA key = \"\(keyText)\";\n" + script)
                XCTAssertEqual(ours.stdout, theirs, "\(mode), headers \(headers)")
                XCTAssertTrue(ours.stdout.contains(mode == "csv" ? "plain" : "\"plain\""), ours.stdout)
            }
        }
    }

    /// Control characters from the database print as sqlite3 3.53's shell
    /// prints them, on every engine: `^[` by default (a tab, a newline and
    /// a CR before a newline lay text out), control pictures with `--escape
    /// symbol`, the bytes with `--escape off`; CSV quotes what held one;
    /// the user's own `.nullvalue` is written as given.
    /// The expected bytes are what SQLCipher 4.19's shell printed.
    func testControlCharactersPrintAsTheNewestShellPrintsThem() throws {
        let run = try shell("""
            SELECT 'x' || char(27) || '[31m' || char(7) || char(127) || 'y' AS "h", 'cr' || char(13) || 'lf' || char(13) || char(10) || 'end' AS c;
            .mode csv
            SELECT 'x' || char(27) || 'y', 'p' || char(13) || 'q';
            .headers on
            .mode line
            SELECT 'x' || char(27) || 'y' AS l;
            .mode column
            SELECT 1 AS n, 'v' || char(27) || 'w' || char(1) AS e, 'cr' || char(13) || 'lf' || char(13) || char(10) || 'end' AS c;
            .mode list --escape symbol
            SELECT 'x' || char(27) || char(31) || 'y' AS s;
            .mode --escape off
            SELECT 'x' || char(27) || 'y' AS s;
            .mode list --escape ascii
            .nullvalue "\u{1B}N"
            SELECT NULL AS z;
            CREATE TABLE "e\u{1B}x"(a);
            .tables e%
            .schema e%

            """, command: "sql")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(Array(run.stdout.utf8), Array("""
            x^[[31m^G\u{7F}y|cr^Mlf\r
            end
            "x^[y","p^Mq"\r
            l: x^[y
            n    e       c
            -  ------  ------
            1  v^[w^A  cr^Mlf
                       end
            s
            x\u{241B}\u{241F}y
            s
            x\u{1B}y
            z
            \u{1B}N
            e^[x
            CREATE TABLE "e^[x"(a);

            """.utf8))
    }

    /// Each kind of bad input is one line on standard error, the next
    /// statement still runs, and the exit status says that one failed.
    func testBadInputIsOneLineAndTheSessionGoesOn() throws {
        let missing = directory.appendingPathComponent("missing.sql").path
        let ragged = directory.appendingPathComponent("ragged.csv").path
        try "a,b\n1,2\n3\n4,5,6\n7,8\n".write(toFile: ragged, atomically: true, encoding: .utf8)
        // Bytes of every value but quotes, brackets and comment starters
        // (which would take the next statement in, as in sqlite3) and newlines.
        var generator = SystemRandomNumberGenerator()
        let garbage = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
            .filter { !Array("'\"`[-/\n;".utf8).contains($0) }
        let cases: [(name: String, input: Data, stderrHas: String)] = [
            (".read of a missing file", Data(".read \(missing)\n".utf8), "Cannot read \(missing)"),
            ("an unknown command", Data(".frobnicate\n".utf8), "Unknown command .frobnicate"),
            ("an SQL error", Data("SELECT * FROM nowhere;\n".utf8), "no such table: nowhere"),
            ("binary garbage", Data(garbage) + Data(";\n".utf8), "Error: near line 1:"),
            (".mode --escape without a value", Data(".mode --escape\n".utf8), ".mode --escape takes one of: ascii, symbol, off."),
            ("an unknown escape", Data(".mode list --escape nope\n".utf8), ".mode --escape takes one of: ascii, symbol, off."),
            ("a word too many", Data(".mode list extra\n".utf8), ".mode takes one mode: extra is one word too many."),
        ]
        for item in cases {
            let run = try dbcrypt(["sql", path, "--key-env", "KEY"], environment: keyEnvironment,
                                  input: item.input + Data("SELECT 'after';\n".utf8))
            XCTAssertEqual(run.status, 1, item.name)
            XCTAssertEqual(run.stdout, "after\n", item.name)
            XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, "\(item.name): \(run.stderr.prefix(300))")
            XCTAssertTrue(run.stderr.contains(item.stderrHas), "\(item.name): \(run.stderr.prefix(300))")
        }

        let unterminated = try shell("SELECT 'before';\nSELECT 'never closed;\n")
        XCTAssertEqual(unterminated.status, 1)
        XCTAssertEqual(unterminated.stdout, "before\n")
        XCTAssertEqual(unterminated.stderr, "dbcrypt: Error: near line 2: Incomplete SQL at the end of the input: a statement ends with ';' outside any string.\n")

        // A ragged row: one line each, NULL for the missing field, the extra dropped, the rest imported.
        let imported = try shell(".import \(ragged) r\nSELECT a, b FROM r ORDER BY rowid;\n")
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertEqual(imported.stdout, "1|2\n3|\n4|5\n7|8\n")
        XCTAssertEqual(imported.stderr, """
            dbcrypt: \(ragged):3: expected 2 columns but found 1: filling the rest with NULL.
            dbcrypt: \(ragged):4: expected 2 columns but found 3: extras ignored.

            """)

        // Bytes that are not UTF-8 are kept as they are, as sqlite3 keeps them; the columns' affinity applies.
        let latin1 = directory.appendingPathComponent("latin1.csv").path
        try Data("caf\u{E9},1,\n".unicodeScalars.map { UInt8($0.value) }).write(to: URL(fileURLWithPath: latin1))
        let bytes = try shell("CREATE TABLE l(a TEXT, b INTEGER, c);\n.import \(latin1) l\nSELECT hex(a), typeof(b), quote(c) FROM l;\n")
        XCTAssertEqual(bytes.stdout, "636166E9|integer|''\n", bytes.stderr)
        // A UTF-16 database stores UTF-8 text as UTF-16, as sqlite3 does.
        let utf8 = directory.appendingPathComponent("utf8.csv").path
        try "café\n".write(toFile: utf8, atomically: true, encoding: .utf8)
        let utf16 = try dbcrypt(["shell", directory.appendingPathComponent("utf16.db").path, "--create", "--key-env", "KEY"], environment: keyEnvironment,
                                input: Data("PRAGMA encoding = 'UTF-16le';\nCREATE TABLE u(a TEXT);\n.import \(utf8) u\nSELECT a, hex(a) FROM u;\n".utf8))
        XCTAssertEqual(utf16.stdout, "café|630061006600E900\n", utf16.stderr)

        // A 10 MB statement over two lines.
        let half = String(repeating: "x", count: 5_000_000)
        let long = try shell("SELECT length('\(half)\n\(half.dropLast())');\nSELECT 'after';\n")
        XCTAssertEqual(long.status, 0, long.stderr)
        XCTAssertEqual(long.stdout, "10000000\nafter\n")

        // A NUL byte: SQLite would read the statement only up to it.
        let nul = try shell("SELECT 'a\0b';\nSELECT 'after';\n")
        XCTAssertEqual(nul.status, 1)
        XCTAssertEqual(nul.stdout, "after\n")
        XCTAssertTrue(nul.stderr.contains("NUL"), nul.stderr)
    }

    /// A wrong key is status 3 before any statement runs, and so is none for an encrypted file.
    func testAWrongKeyEndsTheShellBeforeAnyStatement() throws {
        let wrong = try dbcrypt(["shell", path, "--key-env", "OTHER"], environment: keyEnvironment, input: Data("SELECT 1;\n".utf8))
        XCTAssertEqual(wrong.status, 3)
        XCTAssertEqual(wrong.stdout, "")
        let none = try dbcrypt(["shell", path], input: Data("SELECT 1;\n".utf8))
        XCTAssertNotEqual(none.status, 0)
        XCTAssertEqual(none.stdout, "")
    }

    /// `.schema` lists the statements in the order they were made, as the
    /// shells of 3.4.1, 4.6.1 and 4.19 list them (a table's index after a
    /// later table's trigger), and PATTERN matches a table's or an entry's name.
    func testSchemaListsStatementsInTheOrderTheyWereMade() throws {
        let run = try shell("""
            CREATE TABLE zeta(a);
            CREATE INDEX zeta_a ON zeta(a);
            CREATE TABLE alpha(b);
            CREATE TRIGGER alpha_t AFTER INSERT ON alpha BEGIN SELECT 1; END;
            CREATE INDEX alpha_b ON alpha(b);
            .schema
            .schema a%

            """, command: "sql")
        XCTAssertEqual(run.status, 0, run.stderr)
        let alpha = """
            CREATE TABLE alpha(b);
            CREATE TRIGGER alpha_t AFTER INSERT ON alpha BEGIN SELECT 1; END;
            CREATE INDEX alpha_b ON alpha(b);

            """
        XCTAssertTrue(run.stdout.hasSuffix("CREATE TABLE zeta(a);\nCREATE INDEX zeta_a ON zeta(a);\n" + alpha + alpha), run.stdout)
    }

    /// `.output` and `.once` never empty the database the shell has open,
    /// by any name, nor its journals: a mistyped `.once app.db` is refused
    /// and the session goes on.
    func testOutputIsNeverTheOpenDatabase() throws {
        let link = directory.appendingPathComponent("link.db").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "app.db")
        let hardLink = directory.appendingPathComponent("other-name.db").path
        try FileManager.default.linkItem(atPath: path, toPath: hardLink)
        let before = try contents(path)
        let run = try shell("""
            .once \(path!)
            .once \(hardLink)
            .output \(link)
            .once \(path!)-journal
            SELECT count(*) FROM t;

            """, command: "sql")
        XCTAssertEqual(run.status, 1, run.stderr)
        // The database by name and by another name, its journal; the symbolic link as every link is (the shell writes through none).
        XCTAssertEqual(run.stderr.components(separatedBy: "which this shell has open, or its journal").count, 4, run.stderr)
        XCTAssertTrue(run.stderr.contains("Cannot write \(link): Too many levels of symbolic links"), run.stderr)
        XCTAssertEqual(run.stdout, "5\n")
        XCTAssertEqual(try contents(path), before)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-journal"))
    }

    /// Every dot-command of a script, as the sqlite3 shell's behave.
    func testDotCommands() throws {
        let script = directory.appendingPathComponent("script.sql").path
        try "SELECT 'read ' || count(*) FROM t;\n.mode csv\n".write(toFile: script, atomically: true, encoding: .utf8)
        let out = directory.appendingPathComponent("out.txt").path
        let once = directory.appendingPathComponent("once.txt").path
        let run = try shell("""
            .tables
            .tables t%
            .schema t
            .indexes
            .read \(script)
            SELECT id, s FROM t WHERE id = 1;
            .mode list
            .headers on
            .nullvalue NULL
            SELECT id, n FROM t WHERE id = 3;
            .mode line
            SELECT id, s FROM t WHERE id < 3;
            .mode markdown
            SELECT id, s AS text FROM t WHERE id IN (1, 5);
            .headers off
            .mode table
            SELECT id, n FROM t WHERE id IN (1, 2);
            .headers on
            .mode box
            SELECT id FROM t WHERE id = 1;
            .mode column
            SELECT id, n, 'a' || char(10) || 'b' AS two FROM t WHERE id IN (1, 2);
            .headers off
            .mode list
            .output \(out)
            SELECT 'to the file';
            .output stdout
            .once \(once)
            SELECT 'once';
            SELECT 'back';
            .changes on
            UPDATE t SET n = n WHERE id < 3;
            .changes off
            .timer on
            SELECT 'timed';
            .timer off
            .help
            .quit
            SELECT 'not run';

            """)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stderr, "")
        let expected = """
            t  v
            t
            CREATE TABLE t(id INTEGER PRIMARY KEY, n, r, s, b);
            CREATE INDEX t_n ON t(n);
            t_n
            read 5
            1,plain\r
            id|n
            3|NULL
            id: 1
             s: plain

            id: 2
             s: comma, "quote" and 'apostrophe'
            | id | text  |
            |----|-------|
            |  1 | plain |
            |  5 |       |
            +---+----+
            | 1 | 42 |
            | 2 | -7 |
            +---+----+
            ╭────╮
            │ id │
            ╞════╡
            │  1 │
            ╰────╯
            id  n   two
            --  --  ---
             1  42  a
                    b

             2  -7  a
                    b
            back
            changes: 2   total_changes: 2

            """
        XCTAssertTrue(run.stdout.hasPrefix(expected), run.stdout)
        XCTAssertTrue(run.stdout.contains("timed\nRun Time: real "), run.stdout)
        XCTAssertTrue(run.stdout.contains(".rekey "), run.stdout)
        XCTAssertFalse(run.stdout.contains("not run"))
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), "to the file\n")
        XCTAssertEqual(try String(contentsOfFile: once, encoding: .utf8), "once\n")
        let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600, "what .output writes is plaintext: the owner's alone")
    }

    /// A `.output` that cannot be opened leaves the output as it was; a
    /// typed rekey the shell could not follow, or one on a plaintext
    /// database, is refused before it runs; one it can follow goes on under
    /// the new key.
    func testAFailedOutputAndTypedRekeys() throws {
        let missing = directory.appendingPathComponent("no/such/folder.txt").path
        let refused = try shell(".output \(missing)\nSELECT 'still here';\nPRAGMA rekey = 'a'; SELECT 2;\nSELECT count(*) FROM t;\n")
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.stdout, "still here\n5\n")
        XCTAssertEqual(refused.stderr.split(separator: "\n").count, 2, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("Cannot write \(missing)"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("Write PRAGMA rekey = '...'; alone"), refused.stderr)
        XCTAssertEqual(try shell("SELECT 1;\n").stdout, "1\n", "the key is unchanged")

        let followed = try shell("PRAGMA rekey = \"\(otherKeyText)\";\nSELECT count(*) FROM t;\n.backup \(directory.appendingPathComponent("copy.db").path)\n")
        XCTAssertEqual(followed.status, 0, followed.stderr)
        XCTAssertTrue(followed.stdout.hasSuffix("5\n"), followed.stdout)
        let copy = try dbcrypt(["sql", directory.appendingPathComponent("copy.db").path, "--key-env", "OTHER", "--csv", "SELECT count(*) AS n FROM t"],
                               environment: keyEnvironment)
        XCTAssertEqual(copy.stdout, "n\r\n5\r\n", "the backup is under the key the shell went on with: \(copy.stderr)")

        let plain = directory.appendingPathComponent("plain.db").path
        XCTAssertEqual(try dbcrypt(["sql", plain, "--create", "CREATE TABLE p(x)"]).status, 0)
        let onPlain = try dbcrypt(["shell", plain], input: Data("PRAGMA rekey = 'x';\n".utf8))
        XCTAssertEqual(onPlain.status, 1)
        XCTAssertTrue(onPlain.stderr.contains("does nothing to a plaintext database"), onPlain.stderr)
    }

    /// `.bail on` ends a script at the first error, with status 1.
    func testBailStopsAtTheFirstError() throws {
        let run = try shell(".bail on\nSELECT 'first';\nSELECT * FROM nowhere;\nSELECT 'never';\n")
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stdout, "first\n")
        XCTAssertEqual(run.stderr, "dbcrypt: Error: near line 3: no such table: nowhere\n")
    }

    /// `.dump` writes a full-text table as sqlite3 does: its schema row and
    /// its shadow tables' rows, so that the rebuilt table keeps its docids
    /// and a table without content keeps its index; `.dump TABLE` takes
    /// the shadow tables along.
    func testADumpRebuildsFullTextTablesAsTheyWere() throws {
        XCTAssertEqual(try shell("""
            CREATE VIRTUAL TABLE notes USING fts4(body);
            INSERT INTO notes(docid, body) VALUES (10, 'hello'), (20, 'world');
            CREATE VIRTUAL TABLE bare USING fts4(content='', body);
            INSERT INTO bare(docid, body) VALUES (5, 'kept');

            """).status, 0)
        let query = "SELECT docid FROM notes WHERE notes MATCH 'world';\nSELECT docid FROM bare WHERE bare MATCH 'kept';\n"
        for (name, dump) in [("all", ".dump\n"), ("one", ".dump notes\n")] {
            let text = try shell(dump)
            XCTAssertEqual(text.status, 0, text.stderr)
            XCTAssertTrue(text.stdout.contains("PRAGMA writable_schema=ON;\nINSERT INTO sqlite_master(type,name,tbl_name,rootpage,sql)VALUES('table','notes','notes',0,"),
                          text.stdout)
            let copy = directory.appendingPathComponent("\(name).db").path
            let rebuilt = try dbcrypt(["shell", copy, "--create", "--key-env", "OTHER"], environment: keyEnvironment, input: Data(text.stdout.utf8))
            XCTAssertEqual(rebuilt.status, 0, rebuilt.stderr)
            let again = try dbcrypt(["shell", copy, "--key-env", "OTHER"], environment: keyEnvironment, input: Data(query.utf8))
            XCTAssertEqual(again.stdout, name == "all" ? "20\n5\n" : "20\n", again.stderr)
        }
    }

    /// `.dump` writes SQL that rebuilds the rows elsewhere (infinities
    /// too); `.import` reads CSV into a new table named by its first row;
    /// `.backup` writes a copy under the same key, another or none;
    /// `.cipher` names the format; `.rekey` changes the key.
    func testDumpImportBackupCipherAndRekey() throws {
        // Text that compares equal to an infinity ('Inf' in a TEXT column, 'inf' under NOCASE) stays text.
        XCTAssertEqual(try shell("CREATE TABLE extremes(v, w TEXT COLLATE NOCASE);\n"
                                 + "INSERT INTO extremes VALUES (9e999, 'inf'), (-9e999, 'Inf'), (0.1 + 0.2, '-INF');\n").status, 0)
        let dump = try shell(".dump\n")
        XCTAssertEqual(dump.status, 0, dump.stderr)
        XCTAssertTrue(dump.stdout.hasPrefix("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\nCREATE TABLE t("), dump.stdout)
        XCTAssertTrue(dump.stdout.hasSuffix("COMMIT;\n"))
        let copy = directory.appendingPathComponent("rebuilt.db").path
        let rebuilt = try dbcrypt(["shell", copy, "--create", "--key-env", "OTHER"], environment: keyEnvironment, input: Data(dump.stdout.utf8))
        XCTAssertEqual(rebuilt.status, 0, rebuilt.stderr)
        let compare = "SELECT id, quote(n), quote(r), quote(s), quote(b) FROM t ORDER BY id;\nSELECT name FROM sqlite_master ORDER BY name;\n"
            + "SELECT v = 9e999, v = -9e999, v = 0.1 + 0.2, typeof(w) || w FROM extremes ORDER BY rowid;\n"
        let original = try shell(compare)
        let again = try dbcrypt(["shell", copy, "--key-env", "OTHER"], environment: keyEnvironment, input: Data(compare.utf8))
        XCTAssertEqual(again.stdout, original.stdout)
        XCTAssertTrue(original.stdout.contains("t_n\n"))
        XCTAssertTrue(original.stdout.hasSuffix("1|0|0|textinf\n0|1|0|textInf\n0|0|1|text-INF\n"), original.stdout)

        let csv = directory.appendingPathComponent("people.csv").path
        try "name,\"age, in years\"\r\nAda,36\r\n\"Grace \"\"Amazing\"\" Hopper\",85\r\n".write(toFile: csv, atomically: true, encoding: .utf8)
        let imported = try shell(".import \(csv) people\n.headers on\n.mode csv\nSELECT * FROM people;\n")
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertEqual(imported.stdout, "name,\"age, in years\"\r\nAda,36\r\n\"Grace \"\"Amazing\"\" Hopper\",85\r\n")
        // Into a table that exists every row is data, as in sqlite3, unless --skip says otherwise.
        let skipping = try shell(".import --csv --skip 1 \(csv) people\n.import \(csv) people\n.import --skip x \(csv) people\nSELECT count(*) FROM people;\n")
        XCTAssertEqual(skipping.stdout, "7\n")
        XCTAssertEqual(skipping.stderr, "dbcrypt: Error: near line 3: .import takes a CSV file and a table: .import [--skip N] FILE TABLE.\n")
        XCTAssertEqual(try shell("DELETE FROM people WHERE rowid > 2;\n").status, 0)

        let backup = directory.appendingPathComponent("backup.db").path
        XCTAssertEqual(try shell(".backup \(backup)\n").status, 0)
        let fromBackup = try dbcrypt(["sql", backup, "--key-env", "KEY", "--csv", "SELECT count(*) FROM people"], environment: keyEnvironment)
        XCTAssertEqual(fromBackup.stdout, "count(*)\r\n2\r\n", fromBackup.stderr)
        let underOther = directory.appendingPathComponent("other.db").path, plain = directory.appendingPathComponent("plain.db").path
        let copies = try shell(".backup \(underOther) --new-key\n.backup --plaintext \(plain)\n.backup \(plain) --new-key --plaintext\n", ["--new-key-env", "OTHER"])
        XCTAssertEqual(copies.status, 1)
        XCTAssertTrue(copies.stderr.contains("near line 3: .backup takes one file name, and --new-key"), copies.stderr)
        for (copy, key) in [(underOther, ["--key-env", "OTHER"]), (plain, [])] {
            let read = try dbcrypt(["sql", copy, "--csv", "SELECT count(*) FROM people"] + key, environment: keyEnvironment)
            XCTAssertEqual(read.stdout, "count(*)\r\n2\r\n", read.stderr)
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: plain)).prefix(15), Data("SQLite format 3".utf8))

        let cipher = try shell(".cipher\n")
        XCTAssertEqual(cipher.status, 0, cipher.stderr)
        XCTAssertTrue(cipher.stdout.contains("format: sqlcipher3\n"), cipher.stdout)

        let rekeyed = try shell(".rekey\nSELECT count(*) FROM t;\n", ["--new-key-env", "OTHER"])
        XCTAssertEqual(rekeyed.status, 0, rekeyed.stderr)
        XCTAssertEqual(rekeyed.stdout, "5\n")
        XCTAssertEqual(rekeyed.stderr, "dbcrypt: Changed the key of \(path!).\n")
        XCTAssertEqual(try shell("SELECT 1;\n").status, 3, "the old key no longer opens it")
        let withNewKey = try dbcrypt(["shell", path, "--key-env", "OTHER"], environment: keyEnvironment, input: Data("SELECT count(*) FROM t;\n".utf8))
        XCTAssertEqual(withNewKey.stdout, "5\n", withNewKey.stderr)
    }
}
