import Foundation
import XCTest
@testable import DBCrypt

/// Bad data in a column or an argument is an error or nil, never a trap:
/// dates, numbers and SQL at their extremes.
final class BadValueTests: XCTestCase {
    var db: Database!

    override func tearDown() {
        db = nil   // closed with its test: XCTest keeps test cases until the process exits
        super.tearDown()
    }

    override func setUpWithError() throws {
        db = try makeDatabase(self, "values.db", schema: "CREATE TABLE v(id INTEGER PRIMARY KEY, x)")
    }

    /// `text` read from a column as a `Date`, nil when it is not one.
    private func readDate(_ text: String) throws -> Date? {
        let row = try XCTUnwrap(try db.fetchOne("SELECT ?", [text]))
        return Date.fromDatabaseValue(row[0])
    }

    func testDateTextOfAnyShapeReadsOrFailsWithoutATrap() throws {
        // Huge fractions: only the first nine digits count.
        let long = try XCTUnwrap(try readDate("2024-01-01 00:00:00.12345678901234567890"))
        XCTAssertEqual(long.timeIntervalSince1970, 1_704_067_200.123456789, accuracy: 1e-6)
        // Offsets, Z, T, and SQLite's space before the zone.
        XCTAssertEqual(try readDate("2024-01-01 02:00:00+02:00"), try readDate("2024-01-01 00:00:00"))
        XCTAssertEqual(try readDate("2024-01-01T00:00:00-05:30"), try readDate("2024-01-01 05:30:00"))
        XCTAssertEqual(try readDate("2024-01-01 00:00:00.000 Z"), try readDate("2024-01-01 00:00:00"))
        XCTAssertEqual(try readDate("2024-01-01T00:00"), try readDate("2024-01-01"))
        // Years past 9999 and before year 1.
        XCTAssertEqual(try readDate("10000-01-01 00:00:00")?.timeIntervalSince1970, 253_402_300_800)
        XCTAssertNotNil(try readDate("-0044-03-15 12:00:00"))
        // Nonsense is nil: a wrong separator, an overflowing year, no digits,
        // out-of-range fields, trailing text.
        for bad in ["", "2024", "2024-1-01", "99999999999999999999-01-01", "2024-13-01", "2024-01-32",
                    "2024-01-01 24:00", "2024-01-01 10:60", "2024-01-01 10:00:00.", "2024-01-01 10:00:00+25:00",
                    "2024-01-01 10:00:00 and more", "2024-01-01 10:00:00.1e9", "٢٠٢٤-٠١-٠١", "-", "+"] {
            XCTAssertNil(try readDate(bad), bad)
        }
        XCTAssertThrowsError(try db.fetchOne(Date.self, "SELECT 'not a date'")) { error in
            guard case .typeMismatch(column: _, value: "text", type: "Date", sql: _)? = error as? DatabaseError else {
                return XCTFail("got \(error)")
            }
        }
        // Numbers of seconds at their extremes read without a trap.
        XCTAssertNotNil(try db.fetchScalar(Date.self, "SELECT ?", [Int64.max]))
        XCTAssertNotNil(try db.fetchScalar(Date.self, "SELECT 1e308"))
    }

    func testDatesThatCannotBeStoredAreAnErrorWithTheirStatement() throws {
        let sql = "INSERT INTO v(x) VALUES (?)"
        for date in [Date(timeIntervalSince1970: .infinity), Date(timeIntervalSince1970: -.infinity),
                     Date(timeIntervalSince1970: .nan), Date(timeIntervalSince1970: 1e300)] {
            XCTAssertThrowsError(try db.execute(sql, [date])) { error in
                guard case let .invalidArguments(reason, statement)? = error as? DatabaseError else { return XCTFail("got \(error)") }
                XCTAssertTrue(reason.contains("Date"), reason)
                XCTAssertEqual(statement, sql)
            }
            XCTAssertThrowsError(try db.execute(sql, ["x": date]))
            XCTAssertThrowsError(try db.makeStatement(sql).execute(values: date))
            XCTAssertThrowsError(try db.makeStatement(sql).execute(values: Optional(date)))
        }
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT count(*) FROM v"), 0)
    }

    func testDatesRoundTripFromYearMinus9999ToYear100000() throws {
        let seconds: [Double] = [-377_705_116_800, -62_135_596_800.5, -1, -0.001, 0, 253_402_300_799.999,
                                 253_402_300_800, 3_093_527_980_800, 1e14, -1e14]
        for value in seconds {
            try db.execute("DELETE FROM v")
            try db.execute("INSERT INTO v(id, x) VALUES (1, ?)", [Date(timeIntervalSince1970: value)])
            let back = try XCTUnwrap(try db.fetchScalar(Date.self, "SELECT x FROM v"), "\(value)")
            let text = try db.fetchScalar(String.self, "SELECT x FROM v") ?? ""
            XCTAssertEqual(back.timeIntervalSince1970, value, accuracy: abs(value) > 1e12 ? 0.01 : 0.001,
                           "\(value) read back from \(text)")
        }
        XCTAssertEqual(try SQLDateFormat.string(from: Date(timeIntervalSince1970: -0.001)), "1969-12-31 23:59:59.999")
        XCTAssertEqual(try SQLDateFormat.string(from: Date(timeIntervalSince1970: 253_402_300_800)), "10000-01-01 00:00:00.000")
    }

    func testNumbersThatDoNotFitAreTypeMismatchesNotTraps() throws {
        try db.execute("INSERT INTO v(id, x) VALUES (1, ?), (2, 1e300), (3, ?), (4, -0.0)", [Int64.max, Double.nan])
        XCTAssertThrowsError(try db.fetchScalar(Int32.self, "SELECT x FROM v WHERE id = 1"))
        XCTAssertThrowsError(try db.fetchScalar(Int.self, "SELECT x FROM v WHERE id = 2"))
        XCTAssertNil(try db.fetchScalar(Double.self, "SELECT x FROM v WHERE id = 3"), "SQLite stores NaN as NULL")
        XCTAssertEqual(try db.fetchScalar(Int.self, "SELECT x FROM v WHERE id = 4"), 0)
        struct Small: Decodable { var x: UInt8 }
        XCTAssertThrowsError(try db.fetchAll(Small.self, "SELECT x FROM v WHERE id = 1")) { error in
            XCTAssertEqual(error as? DatabaseError, .typeMismatch(
                column: "x", value: "an integer", type: "UInt8", sql: "SELECT x FROM v WHERE id = 1"))
        }
        XCTAssertThrowsError(try CipherSettings(.sqlcipher4, kdfIterations: Int(Int32.max) + 1).validate())
        var options = Database.Options()
        options.busyTimeout = .seconds(Int64.max)
        XCTAssertNoThrow(try Database.inMemory(options: options))
        options.busyTimeout = .seconds(-1)
        XCTAssertNoThrow(try Database.inMemory(options: options))
    }
}
