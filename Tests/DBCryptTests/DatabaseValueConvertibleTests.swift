import Foundation
import XCTest
@testable import DBCrypt

/// Every value type survives a round trip through an encrypted file.
final class DatabaseValueConvertibleTests: XCTestCase {
    var db: Database!
    var path: String!
    let key = DatabaseKey.named("values")

    override func tearDown() {
        db = nil   // closed with its test: XCTest keeps test cases until the process exits
        super.tearDown()
    }

    override func setUpWithError() throws {
        path = try makeTemporaryDirectory(self).appendingPathComponent("values.db").path
        db = try Database(path: path, key: key)
        try db.execute("CREATE TABLE v(id INTEGER PRIMARY KEY, x)")
    }

    /// Stores `value`, re-opens the file, and reads it back as `T`.
    private func roundTrip<T: DatabaseValueConvertible>(_ value: T) throws -> T {
        try db.execute("DELETE FROM v")
        try db.execute("INSERT INTO v(id, x) VALUES (1, ?)", [value])
        db.close()
        db = try Database(path: path, key: key)
        let row = try XCTUnwrap(try db.fetchOne("SELECT x FROM v WHERE id = 1"))
        return try row[0] as T
    }

    func testIntegersRoundTripIncludingExtremes() throws {
        for value in [Int64.min, -1, 0, 1, Int64.max] { XCTAssertEqual(try roundTrip(value), value) }
        for value in [Int.min, 0, Int.max] { XCTAssertEqual(try roundTrip(value), value) }
        XCTAssertEqual(try roundTrip(Int32.min), Int32.min)
        XCTAssertEqual(try roundTrip(true), true)
        XCTAssertEqual(try roundTrip(false), false)
    }

    func testDoublesRoundTripExactly() throws {
        for value in [0.0, -0.5, .pi, 1e308, -1e-308, .greatestFiniteMagnitude, .infinity] {
            XCTAssertEqual(try roundTrip(value), value)
        }
    }

    func testTextRoundTripsWithNulAndUnicode() throws {
        for value in ["", "plain", "with\0nul\0inside", "émoji 🔐 中文", String(repeating: "x", count: 100_000)] {
            XCTAssertEqual(try roundTrip(value), value)
        }
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT length(CAST(x AS BLOB)) FROM v"), 100_000)
    }

    func testBlobsRoundTripWithNulAndTenMegabytes() throws {
        XCTAssertEqual(try roundTrip(Data()), Data())
        XCTAssertEqual(try roundTrip(Data([0, 0, 1, 0, 255, 0])), Data([0, 0, 1, 0, 255, 0]))
        XCTAssertEqual(try roundTrip([UInt8]([0, 7, 0])), [0, 7, 0])
        var big = Data(count: 10 * 1024 * 1024)
        big.withUnsafeMutableBytes { bytes in
            for i in stride(from: 0, to: bytes.count, by: 4096) { bytes[i] = UInt8(truncatingIfNeeded: i / 4096) }
        }
        XCTAssertEqual(try roundTrip(big), big)
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT length(x) FROM v"), 10 * 1024 * 1024)
    }

    func testEmptyStringIsNotNullAndEmptyBlobIsNotNull() throws {
        try db.execute("INSERT INTO v(id, x) VALUES (10, ?), (11, ?), (12, ?)", ["", Data(), nil])
        let rows = try db.fetchAll("SELECT typeof(x), x IS NULL FROM v WHERE id >= 10 ORDER BY id")
        XCTAssertEqual(rows.map { $0[0] }, [.text("text"), .text("blob"), .text("null")])
        XCTAssertEqual(try rows.map { try $0[1] as Bool }, [false, false, true])
        let values = try db.fetchAll("SELECT x FROM v WHERE id >= 10 ORDER BY id").map { $0[0] }
        XCTAssertEqual(values, [.text(""), .blob(Data()), .null])
    }

    func testNullReadsAsNilOrFailsForNonOptional() throws {
        XCTAssertEqual(try roundTrip(String?.none), String?.none)
        XCTAssertEqual(try roundTrip(Int?.some(5)), 5)
        let row = try XCTUnwrap(try db.fetchOne("SELECT NULL AS n"))
        XCTAssertThrowsError(try row["n"] as String) { error in
            guard case .typeMismatch(column: "n", value: "NULL", type: "String", sql: _)? = error as? DatabaseError else {
                return XCTFail("got \(error)")
            }
        }
    }

    func testDatesRoundTripToTheMillisecondAsSQLiteText() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.123)
        XCTAssertEqual(try roundTrip(date).timeIntervalSince1970, 1_700_000_000.123, accuracy: 0.0005)
        XCTAssertEqual(try db.fetchScalar(String.self, "SELECT x FROM v"), "2023-11-14 22:13:20.123")
        // SQLite's own date functions read what DBCrypt writes, and DBCrypt reads theirs.
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT CAST(strftime('%s', x) AS INTEGER) FROM v"), 1_700_000_000)
        let now = try XCTUnwrap(try db.fetchScalar(Date.self, "SELECT datetime('2024-02-29 12:34:56')"))
        XCTAssertEqual(now.timeIntervalSince1970, 1_709_210_096)
        XCTAssertEqual(Date.fromDatabaseValue(.integer(86400)), Date(timeIntervalSince1970: 86400))
        XCTAssertNil(Date.fromDatabaseValue(.text("yesterday")))
    }

    func testDatabaseValueRoundTripsEveryStorageClass() throws {
        for value: DatabaseValue in [.null, .integer(-3), .real(2.5), .text("t\0t"), .blob(Data([0, 1]))] {
            XCTAssertEqual(try roundTrip(value), value)
        }
    }

    func testConversionsAreStrict() {
        XCTAssertNil(Int.fromDatabaseValue(.text("12")))
        XCTAssertNil(String.fromDatabaseValue(.integer(12)))
        XCTAssertNil(Int.fromDatabaseValue(.real(1.5)))
        XCTAssertEqual(Int.fromDatabaseValue(.real(2.0)), 2)
        XCTAssertNil(Int32.fromDatabaseValue(.integer(Int64(Int32.max) + 1)))
        XCTAssertEqual(Double.fromDatabaseValue(.integer(3)), 3.0)
        XCTAssertEqual(Data.fromDatabaseValue(.text("ab")), Data("ab".utf8))
    }

    /// A cursor's live row reads columns straight from the statement (each
    /// type's `fromStatement`): it converts exactly as the values do.
    func testLiveRowsConvertAsValuesDo() throws {
        let literals = ["12", "-2.0", "1.5", "9.3e18", "'12'", "NULL", "x'0001'", "0"]
        let cursor = try db.query("SELECT " + literals.joined(separator: ", "))
        let row = try XCTUnwrap(try cursor.next())
        func check<T: DatabaseValueConvertible & Equatable>(_ type: T.Type, line: UInt = #line) {
            for index in literals.indices {
                let value: DatabaseValue = row[index]
                XCTAssertEqual(try? row[index] as T, T.fromDatabaseValue(value), "\(literals[index]) as \(T.self)", line: line)
            }
        }
        check(Int64.self)
        check(Int.self)
        check(Int32.self)
        check(Double.self)
        check(Bool.self)
        check(String.self)
        check(Data.self)
        // Optionals: a mismatch throws (none), NULL is some(nil).
        for index in literals.indices {
            var live: Int64??
            do { live = .some(try row[index] as Int64?) } catch { live = .none }
            XCTAssertEqual(live, Int64?.fromDatabaseValue(row[index] as DatabaseValue), literals[index])
        }
        XCTAssertEqual(try row[1] as Int64, -2)
        XCTAssertNil(try? row[2] as Int64)
    }
}
