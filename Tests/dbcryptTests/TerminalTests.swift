import DBCrypt
import Foundation
import XCTest

/// On a terminal (a pseudo-terminal from util-linux's `script`): the key is
/// asked without echo, twice for a new key, and long work draws a progress bar.
final class TerminalTests: XCTestCase {
    func testPromptsWithoutEchoAndDrawsAProgressBar() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            return XCTFail("util-linux's script is missing: apt-get install bsdutils")
        }
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        try makePlaintextDatabase(path, rows: 20_000)
        // The key is typed at the prompts, after a pause for each to appear.
        let typing = "sleep 1; printf '%s\\n' \"$TYPED\"; sleep 1; printf '%s\\n' \"$TYPED\""
        let (status, output, _) = try runProgram("/bin/sh", ["-c", "(\(typing)) | script -qec \"$DBCRYPT migrate $DB\" /dev/null"],
                                          environment: ["TYPED": keyText, "DBCRYPT": dbcryptPath, "DB": path])
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("New key for \(path):"), output)
        XCTAssertTrue(output.contains("Repeat the key:"), output)
        XCTAssertTrue(output.contains("Encrypting ["), output)
        XCTAssertTrue(output.contains("100%"), output)
        XCTAssertFalse(output.contains(keyText), "the typed key was echoed")
        XCTAssertEqual(try Database(path: path, key: testKey).fetchScalar(Int.self, "SELECT count(*) FROM note"), 20_000)
    }
}
