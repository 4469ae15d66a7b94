import DBCrypt
import Foundation
import XCTest

/// Every option that takes a number, given numbers out of every range and
/// things that are not numbers: each is a usage error or a plain failure,
/// never a trap (`restore --at inf` ended by SIGILL with a backtrace).
/// `dbcrypt(...)` fails any run that ends by a signal.
final class NumericOptionTests: XCTestCase {
    private let values = ["inf", "nan", "1e300", "-1", "0", "1e-300", "9223372036854775808", "18446744073709551616", "0x10"]

    func testOutOfRangeNumbersAreRefusedWithoutATrap() throws {
        let dir = try makeTemporaryDirectory(self)
        try makeDatabase(dir.appendingPathComponent("app.db").path, schema: "CREATE TABLE t(x); INSERT INTO t VALUES (1)").close()
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("backup"), withIntermediateDirectories: true)
        let key = ["--key-env", "KEY"]
        let commands: [(arguments: [String], option: String)] = [
            (["restore", "backup", "-o", "out.db"] + key, "--at"),
            (["restore", "backup", "-o", "out.db"] + key, "--commit"),
            (["backup", "app.db", "-o", "continuous", "--continuous", "--once"] + key, "--interval"),
            (["backup", "app.db", "-o", "continuous", "--continuous", "--once"] + key, "--snapshot-every"),
            (["backup", "app.db", "-o", "continuous", "--continuous", "--once"] + key, "--keep"),
            (["check", "app.db"] + key, "--page-size"),
            (["check", "app.db"] + key, "--kdf-iter"),
            (["header", "app.db", "-o", "header.db"] + key, "--plaintext-header"),
            (["sql", "app.db", "SELECT 1"] + key, "--plaintext-header"),
            (["rekey", "app.db", "--new-key-env", "KEY"] + key, "--new-page-size"),
            (["rekey", "app.db", "--new-key-env", "KEY"] + key, "--new-kdf-iter"),
        ]
        for (arguments, option) in commands {
            for value in values {
                let run = try dbcrypt(arguments + [option, value], environment: keyEnvironment, in: dir)
                // dbcrypt(...) has checked that no signal ended it; a refusal is one line.
                if run.status != 0 {
                    XCTAssertTrue([1, 3, 4, 64].contains(run.status), "\(option) \(value): \(run.status) \(run.stderr)")
                    XCTAssertFalse(run.stderr.isEmpty, "\(option) \(value): no reason given")
                    XCTAssertFalse(run.stderr.contains("Fatal error"), "\(option) \(value): \(run.stderr)")
                }
            }
        }
        for value in ["inf", "1e300", "nan", "253402300800"] {
            let run = try dbcrypt(["restore", "backup", "-o", "out.db", "--at", value] + key, environment: keyEnvironment, in: dir)
            XCTAssertEqual(run.status, 64, "--at \(value): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("up to the year 9999"), run.stderr)
        }
    }
}
