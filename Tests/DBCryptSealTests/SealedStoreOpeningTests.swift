import DBCrypt
import Foundation
import TestFixtures
import XCTest
@testable import DBCryptSeal

/// `SealedStore.withStore`: a database opened, its store opened or made
/// (with its first entry), a body run, the database closed, on real files.
final class SealedStoreOpeningTests: XCTestCase {
    let databaseKey = DatabaseKey.passphrase("the database passphrase")
    let storeKey = SealingKey.random()
    var path: String!

    override func setUpWithError() throws {
        path = try makeTemporaryDirectory(self).appendingPathComponent("app.db").path
        var options = Database.Options()
        options.journalMode = .wal
        try Database(path: path, key: databaseKey, options: options).close()
    }

    private func options(readOnly: Bool) -> Database.Options {
        var options = Database.Options()
        options.readOnly = readOnly
        return options
    }

    /// Runs `body` in the store `name`, giving the store key.
    private func withStore<T>(_ name: String = "default", readOnly: Bool = false, create: Bool = false,
                              initialEntry: (name: String, value: () throws -> Data)? = nil,
                              asked: ((Bool) -> Void)? = nil, existedAfterFailure: ((Bool) -> Void)? = nil,
                              _ body: (SealedStore) throws -> T) throws -> T {
        try SealedStore.withStore(named: name, inDatabaseAt: path, key: databaseKey, options: options(readOnly: readOnly), create: create,
                                  initialEntry: initialEntry, credential: { isNew, storeExists, use in
            asked?(isNew)
            do {
                try use(.key(storeKey))
            } catch {
                existedAfterFailure?(storeExists())
                throw error
            }
        }, body)
    }

    private func storeExists(_ name: String = "default") throws -> Bool {
        let queue = try DatabaseQueue(path: path, key: databaseKey, options: options(readOnly: true))
        defer { try? queue.closeWithoutCheckpoint() }
        return try SealedStore.exists(name, in: queue)
    }

    func testAMissingStoreIsNamedAndNoCredentialAsked() throws {
        var asked = false
        XCTAssertThrowsError(try withStore(asked: { _ in asked = true }) { _ in XCTFail("body ran") }) { error in
            XCTAssertEqual(error as? SealError, .noSuchStore(name: "default"))
        }
        XCTAssertFalse(asked)
        XCTAssertFalse(try storeExists())
    }

    func testAStoreIsMadeWithItsFirstEntryThenOpened() throws {
        var isNew: [Bool] = []
        try withStore(create: true, initialEntry: (name: "api.token", value: { Data("s3cr3t".utf8) }), asked: { isNew.append($0) }) { _ in }
        XCTAssertFalse(WriteAheadLogFile.hasFrames(besideDatabaseAt: path), "a change was not checkpointed on close")
        let value = try withStore(readOnly: true, asked: { isNew.append($0) }) { store in try store.getString("api.token") }
        XCTAssertEqual(value, "s3cr3t")
        XCTAssertEqual(isNew, [true, false])
        // The second store of the file: the first is not the one asked for.
        XCTAssertThrowsError(try withStore("other") { _ in }) { error in
            XCTAssertEqual(error as? SealError, .noSuchStore(name: "other"))
        }
    }

    func testAValueThatCannotBeReadMakesNothing() throws {
        struct Unreadable: Error {}
        var asked = false
        XCTAssertThrowsError(try withStore(create: true, initialEntry: (name: "x", value: { throw Unreadable() }),
                                           asked: { _ in asked = true }) { _ in }) { error in
            XCTAssertTrue(error is Unreadable, "\(error)")
        }
        XCTAssertFalse(asked, "a credential was asked before the value was read")
        XCTAssertFalse(try storeExists())
    }

    func testAFailureSaysWhetherTheStoreIsThere() throws {
        struct Stop: Error {}
        var existed: [Bool] = []
        // A store made with its first entry, then a body that fails: the store is there, and its change stays in the log.
        XCTAssertThrowsError(try withStore(create: true, initialEntry: (name: "a", value: { Data("1".utf8) }),
                                           existedAfterFailure: { existed.append($0) }) { _ in throw Stop() })
        XCTAssertTrue(WriteAheadLogFile.hasFrames(besideDatabaseAt: path), "a failed run was checkpointed")
        // Another store whose making fails (a read-only database): it is not there.
        XCTAssertThrowsError(try withStore("other", readOnly: true, create: true,
                                           existedAfterFailure: { existed.append($0) }) { _ in })
        XCTAssertEqual(existed, [true, false])
        XCTAssertTrue(try storeExists())
        XCTAssertFalse(try storeExists("other"))
    }
}
