#if Fluent
import DBCrypt
import DBCryptFluent
import DBCryptSQLKit
import FluentBenchmark
import FluentKit
import NIOPosix
import TestFixtures
import XCTest

/// fluent-kit's own benchmark suite (`FluentBenchmarker`), as
/// fluent-sqlite-driver's tests run it, against two encrypted databases of
/// the linked engine: one test per part, so that a part the engine's SQL
/// lacks is skipped by name.
final class FluentBenchmarkTests: XCTestCase {
    private var databases: Databases!
    private var benchmarker: FluentBenchmarker { FluentBenchmarker(databases: databases) }

    override func setUpWithError() throws {
        let directory = try makeTemporaryDirectory(self)
        databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
        databases.use(.dbcrypt(path: directory.appendingPathComponent("fluent.db").path, key: TestKeys.key), as: .dbcrypt)
        databases.use(.dbcrypt(path: directory.appendingPathComponent("benchmark.db").path, key: TestKeys.key), as: DatabaseID(string: "benchmark"))
    }

    override func tearDown() async throws {
        await databases.shutdownAsync()
        databases = nil
    }

    func testAggregate() throws { try benchmarker.testAggregate() }
    func testArray() throws { try benchmarker.testArray() }
    func testBatch() throws { try benchmarker.testBatch() }
    func testChild() throws { try benchmarker.testChild() }
    func testChildren() throws { try benchmarker.testChildren() }
    func testCodable() throws { try benchmarker.testCodable() }
    func testChunk() throws { try benchmarker.testChunk() }
    func testCompositeID() throws { try benchmarker.testCompositeID() }
    func testCRUD() throws { try benchmarker.testCRUD() }
    func testEagerLoad() throws { try benchmarker.testEagerLoad() }
    func testEnum() throws { try benchmarker.testEnum() }
    func testFilter() throws { try benchmarker.testFilter() }
    func testGroup() throws { try benchmarker.testGroup() }
    func testID() throws { try benchmarker.testID() }
    func testJoin() throws { try benchmarker.testJoin() }
    func testMiddleware() throws { try benchmarker.testMiddleware() }
    func testMigrator() throws { try benchmarker.testMigrator() }
    func testModel() throws {
        try skipUnless(DBCryptSQLiteDialect().hasJSON, "testModel_jsonColumn filters on a JSON path: json_extract (SQLite \(SQLiteVersion.linked.stringValue) was built without JSON1)")
        try benchmarker.testModel()
    }
    func testOptionalParent() throws { try benchmarker.testOptionalParent() }
    func testPagination() throws { try benchmarker.testPagination() }
    func testParent() throws { try benchmarker.testParent() }
    func testPerformance() throws {
        try skipUnless(SQLiteVersion.linked.isAtLeast(3, 32),
                       "testPerformance_siblings binds 1,800 values in one INSERT: SQLite \(SQLiteVersion.linked.stringValue) allows 999 (32,766 from 3.32)")
        try benchmarker.testPerformance()
    }
    func testRange() throws { try benchmarker.testRange() }
    func testSchema() throws { try benchmarker.testSchema() }
    func testSet() throws { try benchmarker.testSet() }
    func testSiblings() throws { try benchmarker.testSiblings() }
    func testSoftDelete() throws { try benchmarker.testSoftDelete() }
    func testSort() throws { try benchmarker.testSort() }
    func testSQL() throws {
        try skipUnless(DBCryptSQLiteDialect().hasJSON, "testSQL_rawDecode selects a JSON path: json_extract (SQLite \(SQLiteVersion.linked.stringValue) was built without JSON1)")
        try benchmarker.testSQL()
    }
    func testTimestamp() throws { try benchmarker.testTimestamp() }
    func testTransaction() throws { try benchmarker.testTransaction() }
    func testUnique() throws { try benchmarker.testUnique() }
}
#endif
