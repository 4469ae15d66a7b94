import DBCrypt
import Foundation
import TestFixtures
import XCTest
@testable import DBCryptSeal

/// A data-key rotation killed at any moment, in a child process: every
/// entry still opens with its value, every key an entry names is still
/// there, and a later rotation finishes the work.
final class StoreRotationKillTests: XCTestCase {
    let databasePassphrase = "rotation kill tests database"
    let storePassphrase = "rotation kill tests store"

    func testAKilledRotationLosesNoEntry() throws {
        let directory = try makeTemporaryDirectory(self)
        let path = directory.appendingPathComponent("store.db").path
        let count = 3_000
        do {
            let queue = try DatabaseQueue(path: path, key: .passphrase(databasePassphrase))
            let store = try SealedStore(queue, credential: .passphrase(storePassphrase),
                                        keyDerivation: .argon2id(memoryKiB: 1024, iterations: 1, parallelism: 1))
            try store.batch { entries in for i in 0..<count { try entries.set("value \(i)", for: "k\(i)") } }
            try queue.close()
        }
        let keys = ["DBCRYPT_TEST_KEY": databasePassphrase, "DBCRYPT_TEST_STORE_KEY": storePassphrase]
        let target = KillTarget.testHelper(["rotate-store", path], keys: keys)

        // How long a whole run takes, to spread the random kills over it.
        let began = Date()
        let whole = try target.start()
        whole.waitUntilExit()
        XCTAssertEqual(whole.terminationStatus, 0, "an uninterrupted rotation failed")
        let typicalDuration = Date().timeIntervalSince(began)

        // The first transaction adds the new key; each of the next twelve
        // seals a batch again: killed in the 2nd to 8th, entries are under
        // both keys, even when the poll missed a few journals and the kill
        // lands some transactions later.
        let latest = count / SealedStore.rotationBatch - 3
        let points: [KillPoint] = (0..<KillCampaign.kills(quick: 3, full: 10)).map { _ in .random }
            + (0..<KillCampaign.kills(quick: 1, full: 2)).map { _ in .fileAppears(directory: directory.path, prefix: "store.db-journal") }
            + (0..<KillCampaign.kills(quick: 2, full: 3)).map { _ in
                .fileAppearsAgain(directory: directory.path, prefix: "store.db-journal", times: .random(in: 2...latest))
            }
        var midRotation = 0
        for point in points.shuffled() {
            let landed = try runAndKill(at: point, typicalDuration: typicalDuration, target: target)
            let queue = try DatabaseQueue(path: path, key: .passphrase(databasePassphrase))
            let store = try SealedStore(queue, credential: .passphrase(storePassphrase), create: false)
            let values = try queue.read { db in
                try (0..<count).map { try store.entries(in: db).getString("k\($0)") }
            }
            XCTAssertEqual(values, (0..<count).map { "value \($0)" }, "killed \(point): an entry is lost or does not open")
            let (used, kept) = try queue.read { db in
                (Set(try db.fetchAll(Data.self, "SELECT value FROM dbcrypt_sealed_entry").map { try SealedFormat.keyID(of: $0) }),
                 Set(try db.fetchAll(Int.self, "SELECT id FROM dbcrypt_sealed_key").map(UInt32.init)))
            }
            XCTAssertTrue(used.isSubset(of: kept), "killed \(point): an entry names a key the store no longer has")
            if try store.entriesUnderOlderKeys() > 0 {
                midRotation += 1
            } else if landed, case .fileAppearsAgain = point {
                XCTFail("killed \(point): the rotation had not begun or was over")
            }
            try queue.close()
        }
        XCTAssertGreaterThan(midRotation, 0, "no kill landed while entries were being sealed again")

        let queue = try DatabaseQueue(path: path, key: .passphrase(databasePassphrase))
        let store = try SealedStore(queue, credential: .passphrase(storePassphrase), create: false)
        try store.finishRotation()
        XCTAssertEqual(try store.entriesUnderOlderKeys(), 0)
        XCTAssertEqual(try queue.read { db in try db.fetchScalar(Int.self, "SELECT count(*) FROM dbcrypt_sealed_key") }, 1)
        XCTAssertEqual(try store.getString("k\(count - 1)"), "value \(count - 1)")
    }
}
