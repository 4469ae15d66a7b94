import DBCrypt
import Foundation
import TestFixtures
import XCTest
@testable import DBCryptSeal

/// A record with sealed properties of every kind, keyed by a UUID.
private struct Account: Record, Equatable {
    struct Profile: Codable, Equatable { var email: String; var scopes: [String] }
    static let databaseTableName = "account"
    static let databaseColumnNaming = ColumnNaming.snakeCase
    var id: UUID
    var name: String
    @Sealed var apiToken: String
    @Sealed var recoveryCode: String?
    @Sealed var avatar: Data
    @Sealed var profile: Profile
}

/// An account's key and token, in another table of the same columns.
private struct ArchivedAccount: Record {
    static let databaseTableName = "archived_account"
    static let databaseColumnNaming = ColumnNaming.snakeCase
    var id: UUID
    @Sealed var apiToken: String
}

/// A sealed property in a record whose key SQLite chooses.
private struct Diary: Record {
    var id: Int64?
    @Sealed var text: String
    mutating func didInsert(rowID: Int64) { id = rowID }
}

/// A sealed property in a table keyed by its hidden rowid, which VACUUM may renumber.
private struct Memo: Record {
    static let databasePrimaryKey = ["rowid"]
    var rowid: Int64?
    @Sealed var text: String
}

/// A primary key that is itself sealed.
private struct Secretive: Record {
    @Sealed var id: String
    var note: String
}

/// Sealed properties of records, on encrypted files: stored sealed, bound
/// to their table, column and row, opened only with the database's keys.
final class SealedPropertyTests: XCTestCase {
    let schema = """
        CREATE TABLE account(id TEXT PRIMARY KEY, name TEXT NOT NULL, api_token BLOB NOT NULL, recovery_code BLOB,
                             avatar BLOB NOT NULL, profile BLOB NOT NULL);
        CREATE TABLE archived_account(id TEXT PRIMARY KEY, name TEXT NOT NULL, api_token BLOB NOT NULL, recovery_code BLOB,
                                      avatar BLOB NOT NULL, profile BLOB NOT NULL);
        CREATE TABLE diary(id INTEGER PRIMARY KEY, text BLOB);
        """
    let key = try! SealingKey(hex: String(repeating: "5a", count: 32), id: 1)
    let databaseKey = DatabaseKey.passphrase("the database passphrase")
    var directory: URL!

    override func setUpWithError() throws {
        directory = try makeTemporaryDirectory(self)
    }

    private func options(_ keys: SealingKeySet?) -> Database.Options {
        var options = Database.Options()
        options.sealingKeys = keys
        return options
    }

    private func open(_ name: String = "accounts.db", keys: SealingKeySet?) throws -> Database {
        try Database(path: directory.appendingPathComponent(name).path, key: databaseKey, options: options(keys))
    }

    private func ada() -> Account {
        Account(id: UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!, name: "Ada", apiToken: "tok-ada-1815",
                recoveryCode: "recover-ada", avatar: Data([0, 1, 2, 250]), profile: .init(email: "ada@example.org", scopes: ["read"]))
    }

    /// A new database with Ada and Grace (Ada's values under another id and
    /// name, and no recovery code) inserted.
    private func openWithAdaAndGrace() throws -> (Database, Account) {
        let db = try open(keys: try SealingKeySet(current: key))
        try db.execute(schema)
        var grace = ada()
        grace.id = UUID()
        grace.name = "Grace"
        grace.recoveryCode = nil
        _ = try ada().inserted(db)
        _ = try grace.inserted(db)
        return (db, grace)
    }

    func testSealedPropertiesAreStoredSealedAndReadBackThroughTheRecord() throws {
        let (db, grace) = try openWithAdaAndGrace()
        XCTAssertEqual(try Account.fetchOne(db, key: ada().id), ada())
        XCTAssertEqual(try Account.fetchOne(db, key: grace.id), grace)
        XCTAssertEqual(try db.fetchAll(Account.self, "SELECT * FROM account ORDER BY name"), [ada(), grace])

        // In the table: sealed blobs (DBCryptSeal's format), none holding its plaintext; NULL for nil.
        let row = try XCTUnwrap(db.fetchOne("SELECT api_token, recovery_code, avatar, profile FROM account WHERE name = 'Ada'"))
        for index in 0..<4 {
            guard case let .blob(sealed) = row[index] else { return XCTFail("column \(index) is not a blob: \(row[index])") }
            XCTAssertEqual(try SealedFormat.keyID(of: sealed), 1)
            for plaintext in ["tok-ada-1815", "recover-ada", "ada@example.org"] {
                XCTAssertNil(sealed.range(of: Data(plaintext.utf8)), "column \(index) holds \(plaintext)")
            }
        }
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT recovery_code IS NULL FROM account WHERE name = 'Grace'"), 1)
        // Printing a record does not print its sealed values.
        XCTAssertFalse(String(describing: ada()).contains("tok-ada-1815"))
        db.close()
        let file = try Data(contentsOf: directory.appendingPathComponent("accounts.db"))
        XCTAssertNil(file.range(of: Data("tok-ada-1815".utf8)))
    }

    func testASealedValueMovedToAnotherRowColumnOrTableDoesNotOpen() throws {
        let (db, grace) = try openWithAdaAndGrace()
        // Another row: Grace's token replaced by Ada's, byte for byte.
        try db.execute("UPDATE account SET api_token = (SELECT api_token FROM account WHERE name = 'Ada') WHERE name = 'Grace'")
        XCTAssertThrowsError(try Account.fetchOne(db, key: grace.id)) { XCTAssertEqual($0 as? SealError, .authenticationFailed) }
        XCTAssertEqual(try Account.fetchOne(db, key: ada().id), ada())
        // Another column of the same row.
        try db.execute("UPDATE account SET recovery_code = api_token WHERE name = 'Ada'")
        XCTAssertThrowsError(try Account.fetchOne(db, key: ada().id)) { XCTAssertEqual($0 as? SealError, .authenticationFailed) }
        // Another table, same key and columns.
        try db.execute("DELETE FROM account")
        _ = try ada().inserted(db)
        try db.execute("INSERT INTO archived_account SELECT * FROM account")
        XCTAssertThrowsError(try ArchivedAccount.fetchOne(db, key: ada().id)) { XCTAssertEqual($0 as? SealError, .authenticationFailed) }
        // A key changed by SQL leaves the row's sealed values bound to the old key.
        try db.execute("UPDATE account SET id = ?", [UUID().uuidString])
        XCTAssertThrowsError(try Account.fetchAll(db)) { XCTAssertEqual($0 as? SealError, .authenticationFailed) }
    }

    func testKeysOpenWhatTheySealedAndNothingElse() throws {
        let db = try open(keys: try SealingKeySet(current: key))
        try db.execute(schema)
        _ = try ada().inserted(db)
        db.close()

        // No keys: an error at the first write or read, not garbage.
        let keyless = try open(keys: nil)
        XCTAssertThrowsError(try Account.fetchOne(keyless, key: ada().id)) {
            guard case .invalidKey(let reason)? = $0 as? SealError else { return XCTFail("\($0)") }
            XCTAssertTrue(reason.contains("sealingKeys"), reason)
        }
        var other = ada()
        other.id = UUID()
        XCTAssertThrowsError(try other.insert(keyless)) { XCTAssertNotNil($0 as? SealError) }
        XCTAssertEqual(try keyless.fetchScalar(Int.self, "SELECT count(*) FROM account"), 1)
        keyless.close()

        // Another key under another id: the sealed value names the key it needs.
        let stranger = try open(keys: try SealingKeySet(current: SealingKey.random(id: 2)))
        XCTAssertThrowsError(try Account.fetchOne(stranger, key: ada().id)) {
            XCTAssertEqual($0 as? SealError, .wrongKey(sealedWith: 1, given: [2]))
        }
        stranger.close()
        // Another key under the same id.
        let impostor = try open(keys: try SealingKeySet(current: SealingKey.random(id: 1)))
        XCTAssertThrowsError(try Account.fetchOne(impostor, key: ada().id)) { XCTAssertEqual($0 as? SealError, .authenticationFailed) }
        impostor.close()

        // A new current key with the old one kept: old rows open, rows written again are sealed with the new key.
        let newKey = SealingKey.random(id: 2)
        let rotated = try open(keys: try SealingKeySet(current: newKey, others: [key]))
        var account = try XCTUnwrap(Account.fetchOne(rotated, key: ada().id))
        XCTAssertEqual(account, ada())
        try account.updateChanges(rotated) { $0.apiToken = "tok-ada-1816" }
        let ids = try rotated.fetchAll(Data.self, "SELECT api_token FROM account").map { try SealedFormat.keyID(of: $0) }
        XCTAssertEqual(ids, [2])
        rotated.close()
        let newOnly = try open(keys: try SealingKeySet(current: newKey))
        XCTAssertThrowsError(try Account.fetchOne(newOnly, key: ada().id)) { XCTAssertEqual($0 as? SealError, .wrongKey(sealedWith: 1, given: [2])) }
        newOnly.close()
    }

    func testUpdatesAndUpsertsSealTheirValuesForTheirRow() throws {
        let db = try open(keys: try SealingKeySet(current: key))
        try db.execute(schema)
        var account = ada()
        try account.upsert(db)
        XCTAssertEqual(try Account.fetchOne(db, key: account.id), account)
        let sealedBefore = try db.fetchScalar(Data.self, "SELECT api_token FROM account")
        // Nothing changed: nothing written (a sealed value compares as the value it holds).
        XCTAssertFalse(try account.updateChanges(db) { $0.name = "Ada" })
        XCTAssertEqual(try db.fetchScalar(Data.self, "SELECT api_token FROM account"), sealedBefore)
        // A sealed value changed: written, sealed anew.
        XCTAssertTrue(try account.updateChanges(db) { $0.recoveryCode = nil })
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT recovery_code IS NULL FROM account"), 1)
        account.profile.scopes.append("write")
        try account.update(db)
        try account.upsert(db)
        XCTAssertEqual(try Account.fetchAll(db), [account])
        XCTAssertNotEqual(try db.fetchScalar(Data.self, "SELECT api_token FROM account"), sealedBefore, "a fresh nonce per seal")
    }

    func testRecordsWithoutTheirKeyAndTypesThatAreNotRecordsAreClearErrors() throws {
        let db = try open(keys: try SealingKeySet(current: key))
        try db.execute(schema)
        // The row's key is part of what a value is bound to: SQLite's choice comes too late.
        var diary = Diary(id: nil, text: "dear diary")
        XCTAssertThrowsError(try diary.insert(db)) {
            guard case let .recordEncodingFailed(table, column, reason)? = $0 as? DatabaseError else { return XCTFail("\($0)") }
            XCTAssertEqual(table, "Diary")
            XCTAssertEqual(column, "text")
            XCTAssertTrue(reason.contains("id"), reason)
        }
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM diary"), 0)
        diary.id = 7
        try diary.insert(db)
        XCTAssertEqual(try Diary.fetchOne(db, key: 7)?.text, "dear diary")

        // Neither the hidden rowid nor a sealed key can bind a value to its row.
        try db.execute("CREATE TABLE Memo(text BLOB); CREATE TABLE Secretive(id BLOB PRIMARY KEY, note TEXT)")
        for (record, column, reason) in [(Memo(rowid: 1, text: "x") as any Record, "text", "VACUUM"), (Secretive(id: "x", note: "y"), "id", "primary key")] {
            var record = record
            XCTAssertThrowsError(try record.insert(db)) {
                guard case let .recordEncodingFailed(_, failed, message)? = $0 as? DatabaseError else { return XCTFail("\($0)") }
                XCTAssertEqual(failed, column)
                XCTAssertTrue(message.contains(reason), message)
            }
        }
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT (SELECT count(*) FROM Memo) + (SELECT count(*) FROM Secretive)"), 0)

        // A type that is not a record names no table to bind to.
        struct Loose: Decodable { var id: Int64; @Sealed var text: String }
        XCTAssertThrowsError(try db.fetchAll(Loose.self, "SELECT * FROM diary")) {
            guard case let .decodingFailed(column, _, sql)? = $0 as? DatabaseError else { return XCTFail("\($0)") }
            XCTAssertEqual(column, "text")
            XCTAssertEqual(sql, "SELECT * FROM diary")
        }
        // A query without the key columns cannot place the value.
        XCTAssertThrowsError(try db.fetchAll(Diary.self, "SELECT text FROM diary")) {
            XCTAssertEqual($0 as? DatabaseError, .columnNotFound(name: "id", sql: "SELECT text FROM diary"))
        }
        // Outside a record, a sealed value does not encode in the clear.
        XCTAssertThrowsError(try JSONEncoder().encode(ada()))
    }

    func testSealedPropertiesThroughAPoolsReaders() throws {
        let path = directory.appendingPathComponent("pool.db").path
        let pool = try DatabasePool(path: path, key: databaseKey, options: options(try SealingKeySet(current: key)))
        try pool.write { db in
            try db.execute(self.schema)
            _ = try self.ada().inserted(db)
        }
        XCTAssertEqual(try pool.read { db in try Account.fetchAll(db) }, [ada()])
    }
}
