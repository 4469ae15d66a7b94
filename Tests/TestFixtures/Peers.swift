// The programs we did not write that the interoperability tests run: the
// engine's own `sqlcipher` shell, Python's sqlite3, and the peers of the
// interop virtualenv.
import Foundation
import XCTest

/// Runs the engine's `sqlcipher` shell on `path` with `script` on its standard
/// input (so keys never reach its arguments), from `defaults`, and returns
/// what it printed.
/// Fails the test when the shell is missing, complains, or exits non-zero.
@discardableResult
public func runSQLCipherShell(_ path: String, _ script: String, defaults: ShellDefaults = .sqlcipher3,
                              file: StaticString = #filePath, line: UInt = #line) throws -> String {
    guard FileManager.default.isExecutableFile(atPath: sqlcipherShell) else {
        XCTFail("the sqlcipher shell is not installed: run scripts/bootstrap", file: file, line: line)
        return ""
    }
    let (status, printed, complaint) = try runSQLCipherShellUnchecked(path, script, defaults: defaults)
    XCTAssertEqual(status, 0, "sqlcipher shell failed: \(complaint)", file: file, line: line)
    XCTAssertEqual(complaint, "", file: file, line: line)
    return printed
}

/// The engine's `sqlcipher` shell (Debian's package).
public let sqlcipherShell = "/usr/bin/sqlcipher"

/// The settings the `sqlcipher` shell starts from.
public enum ShellDefaults: Sendable {
    /// SQLCipher 3's (what Debian 12's 3.4.1 shell writes), on any shell:
    /// a 4.x shell is given `cipher_default_compatibility = 3`.
    case sqlcipher3
    /// The shell's own: SQLCipher 3's on 3.4.1, SQLCipher 4's on 4.x.
    case own
}

/// The engine's shell is SQLCipher 4 or later (`PRAGMA cipher_version`).
public let shellIsSQLCipher4: Bool = {
    guard let (_, printed, _) = try? runProgram(sqlcipherShell, ["-batch", ":memory:"], input: "PRAGMA cipher_version;\n") else { return false }
    return !printed.hasPrefix("3.")
}()

/// Runs the `sqlcipher` shell on `path` with `script` on its standard input
/// and stops at the first error (`-bail`), for tests that expect it to fail:
/// its exit status, what it printed and its complaint, unjudged. A 4.x
/// shell first has its log turned off (it logs every failed page check to
/// stderr) and, for `.sqlcipher3`, SQLCipher 3's defaults set.
public func runSQLCipherShellUnchecked(_ path: String, _ script: String, defaults: ShellDefaults = .sqlcipher3)
    throws -> (status: Int32, printed: String, complaint: String) {
    var result = try runProgram(sqlcipherShell, ["-batch", "-bail", path], input: shellPrologue(defaults) + script)
    // A 4.x shell answers `PRAGMA key` with "ok"; 3.4.1 says nothing.
    if shellIsSQLCipher4, script.hasPrefix("PRAGMA key"), result.1.hasPrefix("ok\n") { result.1.removeFirst(3) }
    return result
}

/// What a shell script starts with to run from `defaults` (on a 3.4.1
/// shell, nothing): see ``runSQLCipherShellUnchecked(_:_:defaults:)``.
public func shellPrologue(_ defaults: ShellDefaults = .sqlcipher3) -> String {
    guard shellIsSQLCipher4 else { return "" }
    return """
        .output /dev/null
        PRAGMA cipher_log_source = NONE;
        PRAGMA cipher_log_level = NONE;
        \(defaults == .sqlcipher3 ? "PRAGMA cipher_default_compatibility = 3;" : "")
        .output stdout

        """
}

/// A database at `path` in WAL mode, with the row "zero" of table `t(a)` in
/// the file and `rows` each committed in its `-wal` only: the engine's
/// `sqlcipher` shell writes them and is killed before it closes (closing
/// would checkpoint them into the file). Keyed with `key` (on stdin), from
/// the shell's `defaults`. `loggedFirst` is SQL that runs first in the log
/// (a schema change puts page 1 there).
public func writeLoggedDatabase(_ path: String, key: String, rows: [String] = ["one", "two", "three"], loggedFirst: String = "",
                                defaults: ShellDefaults = .sqlcipher3, file: StaticString = #filePath, line: UInt = #line) throws {
    let inserts = loggedFirst + "\n" + rows.map { "INSERT INTO t VALUES('\($0)');" }.joined(separator: "\n")
    let (status, _, complaint) = try runSQLCipherShellUnchecked(path, """
        PRAGMA key = "\(key)";
        PRAGMA journal_mode = WAL;
        CREATE TABLE t(a);
        INSERT INTO t VALUES('zero');
        PRAGMA wal_checkpoint(TRUNCATE);
        \(inserts)
        .shell kill -9 $PPID
        """, defaults: defaults)
    XCTAssertEqual(status, SIGKILL, complaint, file: file, line: line)
    let log = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
    XCTAssertGreaterThan(log.count, 32 + (24 + 1024) * rows.count - 1, "the log holds the commits", file: file, line: line)
}

/// The Python of the virtualenv `scripts/interop-venv` makes (`make test` runs it),
/// with `sqlcipher3` (SQLCipher 4.x) and `apsw-sqlite3mc` (SQLite3 Multiple Ciphers).
public let interopPython = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent(".build/interop-venv/bin/python").path

/// Runs `script` with the virtualenv's Python. The script sees `path`, `key`
/// (passed in the environment, never in arguments) and `args`. Returns what
/// it printed; fails the test when it exits non-zero.
@discardableResult
public func runPeer(_ path: String, key: String, _ script: String, arguments: [String] = [],
                    file: StaticString = #filePath, line: UInt = #line) throws -> String {
    guard FileManager.default.isExecutableFile(atPath: interopPython) else {
        XCTFail("the interop virtualenv is missing: run scripts/interop-venv (make test does)", file: file, line: line)
        return ""
    }
    let prologue = "import os, sys\npath = sys.argv[1]\nkey = os.environ['DBCRYPT_PEER_KEY']\nargs = sys.argv[2:]\n"
    let (status, printed, complaint) = try runProgram(
        interopPython, ["-c", prologue + script, path] + arguments, environment: ["DBCRYPT_PEER_KEY": key])
    XCTAssertEqual(status, 0, complaint, file: file, line: line)
    return printed
}

/// Reads a plaintext database with the system Python's sqlite3 module (the
/// system's SQLite, which DBCrypt does not link); `db` is the connection.
/// `arguments` follow the path, as `sys.argv[2...]`.
public func runPythonSQLite(_ path: String, _ script: String, arguments: [String] = [],
                            file: StaticString = #filePath, line: UInt = #line) throws -> String {
    let (status, printed, complaint) = try runProgram(
        "/usr/bin/env", ["python3", "-c", "import sqlite3, sys\ndb = sqlite3.connect(sys.argv[1])\n" + script, path] + arguments)
    XCTAssertEqual(status, 0, complaint, file: file, line: line)
    return printed
}
