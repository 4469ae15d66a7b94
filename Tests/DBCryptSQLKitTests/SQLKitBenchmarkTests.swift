#if SQLKit
import DBCrypt
import DBCryptSQLKit
import Logging
import SQLKit
import SQLKitBenchmark
import TestFixtures
import XCTest

/// sql-kit's own benchmark suite (`SQLBenchmarker`), as sqlite-kit runs it,
/// against an encrypted pool of the linked engine: one test per part, so
/// that a part the engine's SQL lacks is skipped by name.
final class SQLKitBenchmarkTests: XCTestCase {
    private var pool: DatabasePool!
    private var benchmarker: SQLBenchmarker!

    override func setUpWithError() throws {
        let path = try makeTemporaryDirectory(self).appendingPathComponent("sqlkit.db").path
        pool = try DatabasePool(path: path, key: TestKeys.key)
        benchmarker = SQLBenchmarker(on: pool.sql(logger: Logger(label: "SQLKitBenchmarkTests")))
    }

    override func tearDownWithError() throws {
        try pool.close()
    }

    private var dialect: DBCryptSQLiteDialect { DBCryptSQLiteDialect() }

    func testPlanets() async throws { try await benchmarker.testPlanets() }
    func testCodable() async throws { try await benchmarker.testCodable() }
    func testEnum() async throws { try await benchmarker.testEnum() }
    func testUnions() async throws { try await benchmarker.testUnions() }

    func testUpserts() async throws {
        try skipUnless(dialect.upsertSyntax != .unsupported, "UPSERT (SQLite \(SQLiteVersion.linked.stringValue) has it from 3.24)")
        try await benchmarker.testUpserts()
    }

    func testJSONPaths() async throws {
        try skipUnless(dialect.hasJSON, "json_extract (SQLite \(SQLiteVersion.linked.stringValue) was built without JSON1)")
        try await benchmarker.testJSONPaths()
    }
}
#endif
