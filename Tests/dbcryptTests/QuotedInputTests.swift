import DBCrypt
import Foundation
import XCTest

/// What a message quotes back (a name, a path) never reaches the terminal
/// raw: control characters and escapes are written out, and a name no key
/// store can hold is a usage error in one short line.
final class QuotedInputTests: XCTestCase {
    private let escape = "\u{1B}[31m"

    private func assertNothingRaw(_ run: Run, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        for text in [run.stdout, run.stderr] {
            XCTAssertFalse(text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F || (0x80...0x9F).contains($0.value) },
                           "\(what): a control character reached the terminal: \(text.debugDescription)", file: file, line: line)
        }
    }

    func testControlCharactersInNamesAndPathsAreEscaped() throws {
        let dir = try makeTemporaryDirectory(self)
        let credentials = dir.appendingPathComponent("credentials")
        try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
        let tabbed = try dbcrypt(["sql", "app.db", "SELECT 1", "--create", "--key-credential", "a\tb"],
                                 environment: ["CREDENTIALS_DIRECTORY": credentials.path], in: dir)
        XCTAssertEqual(tabbed.status, 6, tabbed.stderr)
        XCTAssertTrue(tabbed.stderr.contains(#"a\tb"#), tabbed.stderr)
        assertNothingRaw(tabbed, "a credential's name")

        let missing = try dbcrypt(["check", "\(escape)x.db\u{9B}2J"], in: dir)
        XCTAssertEqual(missing.status, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.contains(#"\u{1B}[31mx.db\u{9B}2J"#), missing.stderr)
        assertNothingRaw(missing, "a path in an error")

        try makeDatabase(dir.appendingPathComponent("app.db").path, schema: "CREATE TABLE t(x)").close()
        let output = "out\(escape).db"
        let decrypted = try dbcrypt(["decrypt", "app.db", "-o", output, "--key-env", "KEY"], environment: keyEnvironment, in: dir)
        XCTAssertEqual(decrypted.status, 0, decrypted.stderr)
        XCTAssertTrue(decrypted.stdout.contains(#"out\u{1B}[31m.db"#), decrypted.stdout)
        assertNothingRaw(decrypted, "a path in a status line")
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent(output).path), "the file has the name given")
    }

    /// A 5,000-character name: no store can hold it, and no message repeats it.
    func testANameNoStoreCanHoldIsAUsageErrorInOneShortLine() throws {
        let long = String(repeating: "n", count: 5000)
        for option in [["--key-credential", long], ["--key-kernel-keyring", long], ["--key-keyring", "dbcrypt/" + long]] {
            let run = try dbcrypt(["sql", "app.db", "SELECT 1"] + option, environment: ["CREDENTIALS_DIRECTORY": "/nonexistent"])
            XCTAssertEqual(run.status, 64, "\(option[0]): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("of at most"), "\(option[0]): \(run.stderr)")
            XCTAssertLessThan(run.stderr.count, 400, "\(option[0]) repeated the name")
        }
    }
}
