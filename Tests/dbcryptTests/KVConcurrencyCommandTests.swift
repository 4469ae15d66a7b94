import DBCrypt
import Foundation
import XCTest

/// The sealed store shared by processes: two that create it at once both
/// land their values in one store, and a set while another process rotates
/// the data key lands under whichever key is current when it commits.
final class KVConcurrencyCommandTests: XCTestCase {
    var dir: URL!
    var path: String!

    override func setUpWithError() throws {
        dir = try makeTemporaryDirectory(self)
        path = dir.appendingPathComponent("app.db").path
        let db = try Database(path: path, key: testKey)
        try db.execute("CREATE TABLE app(x)")
        db.close()
    }

    /// Starts `dbcrypt kv` with `input` on its standard input.
    /// `storeKey` names the variable of the store's key: a raw key, or
    /// PASSPHRASE, a real passphrase (Argon2id, which takes a while).
    private func startKV(_ arguments: [String], input: Data = Data(), storeKey: String = "STORE") throws -> ChildProcess {
        try ChildProcess(dbcryptPath, ["kv", path] + arguments + ["--key-env", "KEY", "--store-key-env", storeKey],
                         environment: keyEnvironment.merging(["PASSPHRASE": realPassphrase]) { $1 }, input: input,
                         standardOutput: .discarded)
    }

    /// Waits for `started` and returns its exit status and what it said.
    private func finish(_ started: ChildProcess) -> (status: Int32, stderr: String) {
        let (status, _, stderr) = started.finish()
        return (status, stderr)
    }

    private func get(_ name: String, storeKey: String = "STORE") throws -> String {
        try dbcrypt(["kv", path, "get", name, "--key-env", "KEY", "--store-key-env", storeKey],
                    environment: keyEnvironment.merging(["PASSPHRASE": realPassphrase]) { $1 }).stdout
    }

    func testTwoProcessesCreatingTheStoreAtOnceBothLand() throws {
        for trial in 0..<3 {
            let store = "store\(trial)"
            let first = try startKV(["set", "first", "--create", "--store", store], input: Data("one".utf8))
            let second = try startKV(["set", "second", "--create", "--store", store], input: Data("two".utf8))
            for (name, run) in [("first", finish(first)), ("second", finish(second))] {
                XCTAssertEqual(run.status, 0, "trial \(trial), \(name): \(run.stderr)")
            }
            for (name, value) in [("first", "one"), ("second", "two")] {
                let got = try dbcrypt(["kv", path, "get", name, "--store", store, "--key-env", "KEY", "--store-key-env", "STORE"],
                                      environment: keyEnvironment)
                XCTAssertEqual(got.stdout, value, "trial \(trial): \(got.stderr)")
            }
        }
    }

    /// The set reads the store's header, derives its key (a while: the
    /// store's key is a passphrase here), then reads the data keys: a
    /// rotation committed meanwhile retired the key the header named.
    /// Started at several offsets into the rotation, each a deliberate pause.
    func testASetWhileAnotherProcessRotatesLands() throws {
        XCTAssertEqual(finish(try startKV(["set", "seed", "--create"], input: Data("0".utf8), storeKey: "PASSPHRASE")).status, 0)
        for (trial, delay) in [0.0, 0.05, 0.1, 0.15, 0.2, 0.25].enumerated() {
            let rotation = try startKV(["rotate"], storeKey: "PASSPHRASE")
            pause(delay)
            let set = try startKV(["set", "during\(trial)"], input: Data("value \(trial)".utf8), storeKey: "PASSPHRASE")
            let rotated = finish(rotation), written = finish(set)
            XCTAssertEqual(rotated.status, 0, "trial \(trial): \(rotated.stderr)")
            XCTAssertEqual(written.status, 0, "trial \(trial): \(written.stderr)")
            XCTAssertEqual(try get("during\(trial)", storeKey: "PASSPHRASE"), "value \(trial)")
        }
        XCTAssertEqual(try get("seed", storeKey: "PASSPHRASE"), "0")
    }
}
