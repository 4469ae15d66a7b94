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
        // The key is typed at each prompt once it shows (echo is off by then).
        let keyboard = Pipe()
        let terminal = try ChildProcess("/usr/bin/script", ["-qfec", "\"$DBCRYPT\" migrate \"$DB\"", "/dev/null"],
                                        environment: ["DBCRYPT": dbcryptPath, "DB": path], standardInput: keyboard.fileHandleForReading)
        var output = ""
        for prompt in ["New key for \(path):", "Repeat the key:"] {
            while !output.contains(prompt) {
                let data = terminal.outputPipe!.fileHandleForReading.availableData
                guard !data.isEmpty else { break }
                output += String(decoding: data, as: UTF8.self)
            }
            XCTAssertTrue(output.contains(prompt), output)
            keyboard.fileHandleForWriting.write(Data((keyText + "\n").utf8))
        }
        let (status, rest, _) = terminal.finish()
        output += rest
        try keyboard.fileHandleForWriting.close()
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("New key for \(path):"), output)
        XCTAssertTrue(output.contains("Repeat the key:"), output)
        XCTAssertTrue(output.contains("Encrypting ["), output)
        XCTAssertTrue(output.contains("100%"), output)
        XCTAssertFalse(output.contains(keyText), "the typed key was echoed")
        XCTAssertEqual(try Database(path: path, key: testKey).fetchScalar(Int.self, "SELECT count(*) FROM note"), 20_000)
    }
}
