import DBCrypt
import Foundation
import TestFixtures
import XCTest
@testable import DBCryptSeal

/// The sealed key-value store on real files, encrypted and plaintext,
/// through a queue and a pool.
final class SealedStoreTests: XCTestCase {
    /// Cheap parameters, so that tests do not wait on the derivation.
    let fastKDF = KeyDerivation.argon2id(memoryKiB: 1024, iterations: 1, parallelism: 1)
    let databaseKey = DatabaseKey.passphrase("the database passphrase")
    var directory: URL!

    override func setUpWithError() throws {
        directory = try makeTemporaryDirectory(self)
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func makeStore(_ writer: some DatabaseWriter, name: String = "default", passphrase: String = "store passphrase") throws -> SealedStore {
        try SealedStore(writer, name: name, credential: .passphrase(passphrase), keyDerivation: fastKDF)
    }

    func testValuesComeBackThroughAQueueAndAPool() throws {
        struct Account: Codable, Equatable { var user: String; var scopes: [String] }
        let writers: [any DatabaseWriter] = [
            try DatabaseQueue(path: path("queue.db"), key: databaseKey), try DatabasePool(path: path("pool.db"), key: databaseKey),
        ]
        for writer in writers {
            let store = try makeStore(writer)
            XCTAssertNil(try store.get("missing"))
            XCTAssertFalse(try store.contains("missing"))
            try store.set(Data([0, 1, 2, 255]), for: "bytes")
            try store.set("s3cr3t ✓", for: "api.token")
            try store.set(encoding: Account(user: "ada", scopes: ["read"]), for: "api.account")
            try store.set("", for: "empty")
            XCTAssertEqual(try store.get("bytes"), Data([0, 1, 2, 255]))
            XCTAssertEqual(try store.getString("api.token"), "s3cr3t ✓")
            XCTAssertEqual(try store.get(Account.self, "api.account"), Account(user: "ada", scopes: ["read"]))
            XCTAssertEqual(try store.getString("empty"), "")
            XCTAssertTrue(try store.contains("api.token"))
            XCTAssertEqual(try store.names(), ["api.account", "api.token", "bytes", "empty"])
            XCTAssertEqual(try store.names(withPrefix: "api."), ["api.account", "api.token"])
            try store.set("replaced", for: "api.token")
            XCTAssertEqual(try store.getString("api.token"), "replaced")
            XCTAssertTrue(try store.remove("api.token"))
            XCTAssertFalse(try store.remove("api.token"))
            XCTAssertNil(try store.get("api.token"))
            XCTAssertThrowsError(try store.get(Int.self, "api.account")) { guard case .coding = $0 as? SealError else { return XCTFail("\($0)") } }

            // Opened again, by a new object with the passphrase only.
            let reopened = try SealedStore(writer, credential: .passphrase("store passphrase"), create: false)
            XCTAssertEqual(try reopened.get("bytes"), Data([0, 1, 2, 255]))
        }
    }

    /// In a plaintext database file, neither a key nor a value can be read,
    /// by us or by the system's SQLite.
    func testNeitherKeysNorValuesAreReadableInAPlaintextFile() throws {
        let file = path("plain.db")
        let queue = try DatabaseQueue(path: file)
        let store = try makeStore(queue)
        try store.set("value-that-must-not-show", for: "key-that-must-not-show")
        try queue.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        XCTAssertTrue(bytes.starts(with: Data("SQLite format 3".utf8)), "the database itself is plaintext")
        for secret in ["value-that-must-not-show", "key-that-must-not-show"] {
            XCTAssertNil(bytes.range(of: Data(secret.utf8)), "\(secret) is readable in the file")
        }
        let printed = try runPythonSQLite(file, """
            rows = db.execute('SELECT store, name, value FROM dbcrypt_sealed_entry').fetchall()
            print(len(rows), rows[0][0], any(b'must-not-show' in bytes(r[1]) + bytes(r[2]) for r in rows))
            """)
        XCTAssertEqual(printed, "1 default False\n")
    }

    /// A store is made in the same transaction as its first entry: a first
    /// write that fails leaves no store, and one that succeeds is there.
    func testAStoreIsMadeWithItsFirstEntryOrNotAtAll() throws {
        struct Refused: Error {}
        let queue = try DatabaseQueue(path: path("a.db"), key: databaseKey)
        XCTAssertThrowsError(try SealedStore(queue, credential: .passphrase("p"), keyDerivation: fastKDF) { entries in
            try entries.set("first", for: "k")
            throw Refused()
        })
        XCTAssertFalse(try SealedStore.exists("default", in: queue))
        let store = try SealedStore(queue, credential: .passphrase("p"), keyDerivation: fastKDF) { entries in
            try entries.set("first", for: "k")
        }
        XCTAssertEqual(try store.getString("k"), "first")
        // An existing store runs the first write in a transaction of its own.
        _ = try SealedStore(queue, credential: .passphrase("p"), keyDerivation: fastKDF) { entries in try entries.set("second", for: "k") }
        XCTAssertEqual(try store.getString("k"), "second")
    }

    func testAWrongPassphraseIsAnErrorAtOpenAndAMissingStoreIsNamed() throws {
        let queue = try DatabaseQueue(path: path("a.db"), key: databaseKey)
        try makeStore(queue).set("x", for: "k")
        XCTAssertThrowsError(try SealedStore(queue, credential: .passphrase("not it"))) {
            guard case .wrongCredential = $0 as? SealError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try SealedStore(queue, credential: .key(.random()))) {
            guard case .wrongCredential = $0 as? SealError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try SealedStore(queue, name: "other", credential: .passphrase("p"), create: false)) {
            XCTAssertEqual($0 as? SealError, .noSuchStore(name: "other"))
        }
        // A store made with a key opens with that key.
        let key = SealingKey.random()
        try SealedStore(queue, name: "keyed", credential: .key(key)).set("y", for: "k")
        XCTAssertEqual(try SealedStore(queue, name: "keyed", credential: .key(key), create: false).getString("k"), "y")
        XCTAssertThrowsError(try SealedStore(queue, name: "keyed", credential: .passphrase("p"))) {
            guard case .wrongCredential = $0 as? SealError else { return XCTFail("\($0)") }
        }
    }

    /// A sealed name moved onto another row does not list: it is bound to
    /// its row's lookup tag.
    func testANameMovedToAnotherRowIsDamage() throws {
        let queue = try DatabaseQueue(path: path("a.db"), key: databaseKey)
        let store = try makeStore(queue)
        try store.set("one", for: "first")
        try store.set("two", for: "second")
        XCTAssertEqual(try store.names(), ["first", "second"])
        try queue.write { db in
            let first = try db.fetchScalar(Data.self, "SELECT name FROM dbcrypt_sealed_entry WHERE tag = ?", [try store.keys.tag("first")])
            try db.execute("UPDATE dbcrypt_sealed_entry SET name = ? WHERE tag = ?", [first, try store.keys.tag("second")])
        }
        XCTAssertThrowsError(try store.names()) {
            guard case .storeDamaged = $0 as? SealError else { return XCTFail("\($0)") }
        }
        XCTAssertEqual(try store.getString("second"), "two", "the value is still found by its name")
    }

    /// Names are stored encrypted, padded to 32 bytes, and a name with any
    /// byte altered in the file, padding included, does not list (the tag
    /// authenticates it).
    func testANameAlteredInTheFileIsDamage() throws {
        let queue = try DatabaseQueue(path: path("a.db"), key: databaseKey)
        let store = try makeStore(queue)
        try store.set("one", for: "user.1.token")
        let tag = try store.keys.tag("user.1.token")
        let sealed = try queue.read { db in try db.fetchScalar(Data.self, "SELECT name FROM dbcrypt_sealed_entry WHERE tag = ?", [tag]) }
        let stored = try XCTUnwrap(sealed)
        XCTAssertEqual(stored.count, 32)
        XCTAssertNotEqual(stored, Data("user.1.token".utf8))
        for index in stored.indices {
            for flip: UInt8 in [0x01, 0x80] {
                var altered = stored
                altered[index] ^= flip
                try queue.write { db in try db.execute("UPDATE dbcrypt_sealed_entry SET name = ? WHERE tag = ?", [altered, tag]) }
                XCTAssertThrowsError(try store.names(), "byte \(index) ^ \(flip)") {
                    guard case .storeDamaged = $0 as? SealError else { return XCTFail("\($0)") }
                }
            }
        }
        try queue.write { db in try db.execute("UPDATE dbcrypt_sealed_entry SET name = ? WHERE tag = ?", [stored, tag]) }
        XCTAssertEqual(try store.names(), ["user.1.token"])
    }

    /// The file tells a name's length only to within 32 bytes (it used to
    /// tell it exactly). A name stored unpadded, as before, still lists and
    /// opens, and is padded when its entry is set again or the data key
    /// rotated.
    func testNamesArePaddedAndUnpaddedOnesStillOpen() throws {
        let queue = try DatabaseQueue(path: path("a.db"), key: databaseKey)
        let store = try makeStore(queue)
        let names = ["a", String(repeating: "b", count: 31), String(repeating: "c", count: 32), String(repeating: "d", count: 70)]
        for name in names { try store.set("v", for: name) }
        func storedLength(_ name: String) throws -> Int? {
            try queue.read { db in try db.fetchScalar(Int.self, "SELECT length(name) FROM dbcrypt_sealed_entry WHERE tag = ?",
                                                      [try store.keys.tag(name)]) }
        }
        XCTAssertEqual(try names.map(storedLength), [32, 32, 64, 96])
        // As a store written before padding holds it.
        let legacy = try store.keys.nameCipher.apply(Data("a".utf8), tag: try store.keys.tag("a"))
        try queue.write { db in try db.execute("UPDATE dbcrypt_sealed_entry SET name = ? WHERE tag = ?", [legacy, try store.keys.tag("a")]) }
        XCTAssertEqual(try storedLength("a"), 1)
        XCTAssertEqual(try store.names(), names.sorted())
        try store.set("w", for: "a")
        XCTAssertEqual(try storedLength("a"), 32)
        try queue.write { db in try db.execute("UPDATE dbcrypt_sealed_entry SET name = ? WHERE tag = ?", [legacy, try store.keys.tag("a")]) }
        try store.rotateDataKey()
        XCTAssertEqual(try storedLength("a"), 32)
        XCTAssertEqual(try store.names(), names.sorted())
    }

    /// A value moved onto another key, into another store of the same
    /// database, or into the same store name of another file, does not open.
    func testAValueMovedElsewhereDoesNotOpen() throws {
        let queue = try DatabaseQueue(path: path("a.db"), key: databaseKey)
        let store = try makeStore(queue), other = try makeStore(queue, name: "other", passphrase: "store passphrase")
        try store.set("one", for: "first")
        try store.set("two", for: "second")
        try other.set("three", for: "first")
        try queue.write { db in
            let value = { (storeName: String, key: String) throws -> Data in
                let tag = try (storeName == "default" ? store : other).keys.tag(key)
                return try db.fetchScalar(Data.self, "SELECT value FROM dbcrypt_sealed_entry WHERE store = ? AND tag = ?", [storeName, tag])!
            }
            // "second"'s value put on "first"; "default"'s "first" put into "other".
            let first = try value("default", "first"), second = try value("default", "second")
            try db.execute("UPDATE dbcrypt_sealed_entry SET value = ? WHERE store = 'default' AND value = ?", [second, first])
            try db.execute("UPDATE dbcrypt_sealed_entry SET value = ? WHERE store = 'other'", [first])
        }
        XCTAssertThrowsError(try other.get("first")) { XCTAssertEqual($0 as? SealError, .authenticationFailed) }
        XCTAssertThrowsError(try store.get("first")) { XCTAssertEqual($0 as? SealError, .authenticationFailed) }
        XCTAssertEqual(try store.getString("second"), "two")

        // Another file, the same store name and passphrase: its own store id.
        let second = try DatabaseQueue(path: path("b.db"), key: databaseKey)
        let twin = try makeStore(second)
        try twin.set("twin", for: "first")
        let sealed = try second.read { db in try db.fetchScalar(Data.self, "SELECT value FROM dbcrypt_sealed_entry") }
        try queue.write { db in
            try db.execute("UPDATE dbcrypt_sealed_entry SET value = ? WHERE store = 'other'", [sealed])
        }
        XCTAssertThrowsError(try other.get("first"))
    }

    func testABatchCommitsTogetherOrNotAtAllAndJoinsTheCallersTransaction() throws {
        let queue = try DatabaseQueue(path: path("a.db"), key: databaseKey)
        let store = try makeStore(queue)
        try store.set("kept", for: "a")
        XCTAssertThrowsError(try store.batch { entries in
            try entries.set("new", for: "b")
            try entries.remove("a")
            throw DatabaseError.cancelled
        })
        XCTAssertEqual(try store.names(), ["a"])
        try store.batch { entries in
            for i in 0..<100 { try entries.set("\(i)", for: "n\(i)") }
        }
        XCTAssertEqual(try store.names(withPrefix: "n").count, 100)

        try queue.write { db in try db.execute("CREATE TABLE account(id INTEGER PRIMARY KEY, name TEXT)") }
        XCTAssertThrowsError(try queue.write { db in
            try db.execute("INSERT INTO account(name) VALUES ('ada')")
            try store.entries(in: db).set("token of ada", for: "account.1")
            throw DatabaseError.cancelled
        })
        XCTAssertNil(try store.get("account.1"))
        try queue.write { db in
            try db.execute("INSERT INTO account(name) VALUES ('ada')")
            try store.entries(in: db).set("token of ada", for: "account.1")
        }
        XCTAssertEqual(try store.getString("account.1"), "token of ada")
    }

    /// A new passphrase re-wraps the keys and touches no entry.
    func testChangingThePassphraseRewrapsKeysOnly() throws {
        let queue = try DatabaseQueue(path: path("a.db"), key: databaseKey)
        let store = try makeStore(queue)
        for i in 0..<50 { try store.set("value \(i)", for: "k\(i)") }
        let values = { try queue.read { db in try db.fetchAll(Data.self, "SELECT value FROM dbcrypt_sealed_entry ORDER BY name") } }
        let before = try values()
        let saltBefore = try queue.read { db in try db.fetchScalar(Data.self, "SELECT salt FROM dbcrypt_sealed_store") }
        try store.changeCredential(to: .passphrase("a new passphrase"), keyDerivation: .scrypt(n: 1024, r: 8, p: 1))
        XCTAssertEqual(try values(), before, "entries were sealed again")
        XCTAssertNotEqual(try queue.read { db in try db.fetchScalar(Data.self, "SELECT salt FROM dbcrypt_sealed_store") }, saltBefore)
        XCTAssertEqual(try store.getString("k7"), "value 7")
        XCTAssertThrowsError(try SealedStore(queue, credential: .passphrase("store passphrase"), create: false))
        XCTAssertFalse(try store.opens(with: .passphrase("store passphrase")))
        XCTAssertTrue(try store.opens(with: .passphrase("a new passphrase")))
        let reopened = try SealedStore(queue, credential: .passphrase("a new passphrase"), create: false)
        XCTAssertEqual(try reopened.getString("k49"), "value 49")
        let kdf = try queue.read { db in try db.fetchScalar(String.self, "SELECT kdf FROM dbcrypt_sealed_store") }
        XCTAssertEqual(kdf.map { $0.contains("scrypt") }, true, kdf ?? "no kdf")
    }

    /// A header whose key derivation would run for hours (damaged, or
    /// written by someone else) is refused before any work.
    func testAHeaderWithAnEndlessKeyDerivationIsRefused() throws {
        let queue = try DatabaseQueue(path: path("a.db"), key: databaseKey)
        _ = try makeStore(queue)
        let endless = String(decoding: try JSONEncoder().encode(KeyDerivation.argon2id(memoryKiB: 64 * 1024, iterations: 4_000_000, parallelism: 1)), as: UTF8.self)
        try queue.write { db in try db.execute("UPDATE dbcrypt_sealed_store SET kdf = ?", [endless]) }
        XCTAssertThrowsError(try SealedStore(queue, credential: .passphrase("store passphrase"), create: false)) {
            guard case .invalidKeyDerivation = $0 as? SealError else { return XCTFail("\($0)") }
        }
    }

    func testRotationResealsEveryEntryAndForgetsTheOldKey() throws {
        let pool = try DatabasePool(path: path("a.db"), key: databaseKey)
        let store = try makeStore(pool)
        let count = SealedStore.rotationBatch * 2 + 17
        try store.batch { entries in for i in 0..<count { try entries.set("value \(i)", for: "k\(i)") } }
        // A second object on the store, as another part of the app would have.
        let other = try SealedStore(pool, credential: .passphrase("store passphrase"), create: false)

        // Cancelled after the first batch: some entries under each key, all readable.
        let cancellation = JobCancellation()
        let reports = Reports()
        XCTAssertThrowsError(try store.rotateDataKey(progress: { report in
            reports.append(report)
            if report.completed > 0 { cancellation.cancel() }
        }, cancellation: cancellation)) { XCTAssertEqual($0 as? DatabaseError, .cancelled) }
        XCTAssertEqual(try store.entriesUnderOlderKeys(), count - SealedStore.rotationBatch)
        for i in stride(from: 0, to: count, by: 37) { XCTAssertEqual(try other.getString("k\(i)"), "value \(i)") }
        let k0KeyID = { try pool.read { db in
            try SealedFormat.keyID(of: db.fetchScalar(Data.self, "SELECT value FROM dbcrypt_sealed_entry WHERE tag = ?", [try store.keys.tag("k0")])!)
        } }
        let k0WasResealed = try k0KeyID() == 2
        try other.set("set by the other object", for: "k0")
        XCTAssertEqual(try k0KeyID(), 2, "the other object sealed with the retired key")

        // k0, set meanwhile by the other object, is under the new key already.
        let rest = try store.entriesUnderOlderKeys()
        XCTAssertEqual(rest, count - SealedStore.rotationBatch - (k0WasResealed ? 0 : 1))
        try store.finishRotation(progress: { reports.append($0) })
        XCTAssertEqual(try store.entriesUnderOlderKeys(), 0)
        let keyIDs = try pool.read { db in try db.fetchAll(Data.self, "SELECT value FROM dbcrypt_sealed_entry") }
        XCTAssertEqual(Set(try keyIDs.map { try SealedFormat.keyID(of: $0) }), [2])
        XCTAssertEqual(try pool.read { db in try db.fetchAll(Int.self, "SELECT id FROM dbcrypt_sealed_key") }, [2], "the old key is kept")
        XCTAssertEqual(reports.last, JobProgress(completed: rest, total: rest))
        for i in 1..<count { XCTAssertEqual(try other.getString("k\(i)"), "value \(i)") }
        XCTAssertEqual(try store.getString("k0"), "set by the other object")

        // The other object's keys are stale: its next set must not use key 1, now gone.
        try store.rotateDataKey()
        try other.set("after the second rotation", for: "late")
        XCTAssertEqual(try store.entriesUnderOlderKeys(), 0)
        XCTAssertEqual(try store.getString("late"), "after the second rotation")
    }

    func testAnObservedKeyFollowsItsValue() async throws {
        let pool = try DatabasePool(path: path("a.db"), key: databaseKey)
        let store = try makeStore(pool)
        var values: [String?] = []
        for try await value in store.observe("token") {
            values.append(value.map { String(decoding: $0, as: UTF8.self) })
            if values.count == 1 { try store.set("first", for: "token") }
            if values.count == 2 { try store.set("unrelated", for: "other") ; try store.set("second", for: "token") }
            if values.count == 3 { break }
        }
        XCTAssertEqual(values, [nil, "first", "second"], "a commit that leaves the value as it was is not delivered")
    }

    /// The default derivation, Argon2id with 64 MiB, on a real store: the
    /// parameters and a random salt are in the header, and they open it.
    func testTheDefaultDerivationIsArgon2idWithAStoredSalt() throws {
        let queue = try DatabaseQueue(path: path("a.db"), key: databaseKey)
        try SealedStore(queue, credential: .passphrase("p")).set("v", for: "k")
        try SealedStore(queue, name: "second", credential: .passphrase("p")).set("v", for: "k")
        let rows = try queue.read { db in try db.fetchAll("SELECT kdf, salt FROM dbcrypt_sealed_store ORDER BY name") }
        let kdf: String = try rows[0][0]
        XCTAssertEqual(try JSONDecoder().decode(KeyDerivation.self, from: Data(kdf.utf8)), .argon2idDefault)
        XCTAssertNotEqual(try rows[0][1] as Data, try rows[1][1] as Data, "two stores share a salt")
        XCTAssertEqual(try SealedStore(queue, credential: .passphrase("p"), create: false).getString("k"), "v")
    }
}

private final class Reports: @unchecked Sendable {
    private let lock = NSLock()
    private var reports: [JobProgress] = []
    func append(_ report: JobProgress) { lock.lock(); reports.append(report); lock.unlock() }
    var last: JobProgress? { lock.lock(); defer { lock.unlock() }; return reports.last }
}
