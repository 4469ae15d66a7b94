import Foundation
import XCTest
@testable import DBCrypt

private enum Mood: String, Codable { case calm, busy }
private enum Level: Int, Codable { case low = 1, high = 9 }
private struct Address: Codable, Equatable {
    var street: String
    var visited: Date
}

/// One property of every kind the records store.
private struct Sample: Record, Equatable {
    static let databaseTableName = "sample"
    static let databaseColumnNaming = ColumnNaming.snakeCase
    var id: Int64?
    var uuid: UUID
    var createdAt: Date
    var payload: Data
    var homePage: URL
    var price: Decimal
    var mood: Mood
    var level: Level
    var address: Address
    var tags: [String]
    var counts: [String: Int]
    var isActive: Bool
    var ratio: Double
    var optionalUUID: UUID?
    var optionalDate: Date?
    var optionalMood: Mood?
    var optionalAddress: Address?
    var optionalText: String?
    var optionalFlag: Bool?
    mutating func didInsert(rowID: Int64) { id = rowID }
}

final class RecordValueTests: XCTestCase {
    private let schema = """
        CREATE TABLE sample(id INTEGER PRIMARY KEY, uuid, created_at, payload, home_page, price, mood, level, address,
            tags, counts, is_active, ratio, optional_uuid, optional_date, optional_mood, optional_address,
            optional_text, optional_flag)
        """

    private func sample() -> Sample {
        Sample(id: nil, uuid: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
               createdAt: Date(timeIntervalSince1970: 1_700_000_000.125), payload: Data([0, 1, 2, 255]),
               homePage: URL(string: "https://example.com/a?b=c")!, price: Decimal(string: "12.50")!,
               mood: .busy, level: .high, address: Address(street: "1 Main St", visited: Date(timeIntervalSince1970: 86_400.5)),
               tags: ["a", "b"], counts: ["x": 1, "y": 2], isActive: true, ratio: 0.25,
               optionalUUID: nil, optionalDate: nil, optionalMood: nil, optionalAddress: nil, optionalText: nil, optionalFlag: nil)
    }

    func testEveryValueKindRoundTripsOnAnEncryptedFileInItsDocumentedForm() throws {
        let db = try makeDatabase(self, "values.db", schema: schema)
        var value = sample()
        try value.insert(db)
        XCTAssertEqual(try Sample.fetchOne(db, key: value.id!), value)

        let row = try XCTUnwrap(try db.fetchOne("SELECT * FROM sample"))
        XCTAssertEqual(try row["uuid"] as DatabaseValue, DatabaseValue.text("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        XCTAssertEqual(try row["created_at"] as DatabaseValue, DatabaseValue.text("2023-11-14 22:13:20.125"))
        XCTAssertEqual(try row["payload"] as DatabaseValue, DatabaseValue.blob(Data([0, 1, 2, 255])))
        XCTAssertEqual(try row["home_page"] as DatabaseValue, DatabaseValue.text("https://example.com/a?b=c"))
        XCTAssertEqual(try row["price"] as DatabaseValue, DatabaseValue.text("12.5"))
        XCTAssertEqual(try row["mood"] as DatabaseValue, DatabaseValue.text("busy"))
        XCTAssertEqual(try row["level"] as DatabaseValue, DatabaseValue.integer(9))
        XCTAssertEqual(try row["address"] as DatabaseValue, DatabaseValue.text(#"{"street":"1 Main St","visited":"1970-01-02 00:00:00.500"}"#))
        XCTAssertEqual(try row["tags"] as DatabaseValue, DatabaseValue.text(#"["a","b"]"#))
        XCTAssertEqual(try row["counts"] as DatabaseValue, DatabaseValue.text(#"{"x":1,"y":2}"#))
        XCTAssertEqual(try row["is_active"] as DatabaseValue, DatabaseValue.integer(1))
        for column in ["optional_uuid", "optional_date", "optional_mood", "optional_address", "optional_text", "optional_flag"] {
            XCTAssertEqual(try row[column] as DatabaseValue, DatabaseValue.null, column)
        }

        value.optionalUUID = UUID()
        value.optionalDate = Date(timeIntervalSince1970: 0)
        value.optionalMood = .calm
        value.optionalAddress = Address(street: "2", visited: Date(timeIntervalSince1970: 1))
        value.optionalText = ""
        value.optionalFlag = false
        try value.update(db)
        XCTAssertEqual(try Sample.fetchOne(db, key: value.id!), value)
        // Dates compare by their stored text: SQLite's date functions read it.
        XCTAssertEqual(try db.fetchScalar(String.self, "SELECT date(optional_date) FROM sample"), "1970-01-01")
    }

    func testUUIDsBindAndReadFromTextInEitherCaseOrSixteenBytes() throws {
        let db = try makeDatabase(self, "uuid.db", schema: "CREATE TABLE t(u)")
        let uuid = UUID()
        try db.execute("INSERT INTO t VALUES (?)", [uuid])
        XCTAssertEqual(try db.fetchScalar(UUID.self, "SELECT u FROM t"), uuid)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM t WHERE u = ?", [uuid]), 1)
        XCTAssertEqual(UUID.fromDatabaseValue(.text(uuid.uuidString.lowercased())), uuid)
        let bytes = withUnsafeBytes(of: uuid.uuid) { Data($0) }
        XCTAssertEqual(UUID.fromDatabaseValue(.blob(bytes)), uuid)
        XCTAssertNil(UUID.fromDatabaseValue(.blob(bytes.dropLast())))
        XCTAssertNil(UUID.fromDatabaseValue(.text("not a uuid")))
        XCTAssertNil(UUID.fromDatabaseValue(.integer(1)))
        XCTAssertEqual(Decimal.fromDatabaseValue(.integer(-3)), Decimal(-3))
        XCTAssertNil(Decimal.fromDatabaseValue(.text("twelve")))
        XCTAssertNil(URL.fromDatabaseValue(.integer(1)))
    }

    func testValuesThatCannotBeStoredOrReadAreErrorsNamingTheColumn() throws {
        let db = try makeDatabase(self, "bad.db", schema: schema)
        var bad = sample()
        bad.createdAt = Date(timeIntervalSince1970: .infinity)
        XCTAssertThrowsError(try bad.insert(db)) { error in
            guard case let DatabaseError.recordEncodingFailed(table, column?, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual([table, column], ["sample", "created_at"])
        }
        struct Huge: Record {
            static let databaseTableName = "sample"
            var id: Int64?
            var ratio: UInt64
        }
        XCTAssertThrowsError(_ = try Huge(id: nil, ratio: .max).inserted(db)) { error in
            guard case let DatabaseError.recordEncodingFailed(_, column?, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(column, "ratio")
        }
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM sample"), 0)

        var good = sample()
        try good.insert(db)
        for (column, text) in [("address", "{not json"), ("tags", #"{"a":1}"#), ("mood", "angry"), ("uuid", "nope")] {
            try db.execute("UPDATE sample SET \(column) = ?", [text])
            XCTAssertThrowsError(try Sample.fetchAll(db), column) { error in
                switch error {
                case let DatabaseError.decodingFailed(failed?, _, sql?), let DatabaseError.typeMismatch(failed, _, _, sql?):
                    XCTAssertEqual(failed, column)
                    XCTAssertTrue(sql.contains("\"sample\""), sql)
                default: XCTFail("\(column): \(error)")
                }
            }
            try good.update(db)
        }
        _ = good
    }

    func testSnakeCaseColumnNames() {
        let cases = ["firstName": "first_name", "userID": "user_id", "URLString": "url_string", "urlString": "url_string",
                     "address2": "address2", "already_snake": "already_snake", "a": "a", "isHTTPSOnly": "is_https_only",
                     "id": "id", "HTML": "html", "teamID2": "team_id2"]
        for (key, column) in cases { XCTAssertEqual(ColumnNaming.snakeCase.column(for: key), column, key) }
        XCTAssertEqual(ColumnNaming.asIs.column(for: "firstName"), "firstName")
    }

    func testASuperclassesPropertiesAreColumnsOfTheSameRow() throws {
        class Base: Codable {
            var id: Int64?
            var createdBy: String
            init(id: Int64?, createdBy: String) { self.id = id; self.createdBy = createdBy }
        }
        final class Document: Base, Record, @unchecked Sendable {
            static let databaseTableName = "document"
            var title: String
            init(title: String, createdBy: String) {
                self.title = title
                super.init(id: nil, createdBy: createdBy)
            }
            enum CodingKeys: String, CodingKey { case title }
            required init(from decoder: any Decoder) throws {
                title = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .title)
                try super.init(from: decoder.container(keyedBy: CodingKeys.self).superDecoder())
            }
            override func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(title, forKey: .title)
                try super.encode(to: container.superEncoder())
            }
            func didInsert(rowID: Int64) { id = rowID }
        }
        let db = try makeDatabase(self, "class.db", schema: "CREATE TABLE document(id INTEGER PRIMARY KEY, title, createdBy)")
        var document = Document(title: "Plan", createdBy: "ada")
        try document.insert(db)
        XCTAssertEqual(document.id, 1)
        let read = try XCTUnwrap(try Document.fetchOne(db, key: 1))
        XCTAssertEqual([read.title, read.createdBy], ["Plan", "ada"])
        XCTAssertEqual(read.id, 1)
    }
}
