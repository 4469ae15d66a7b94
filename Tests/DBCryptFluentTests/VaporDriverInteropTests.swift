#if Fluent
import DBCrypt
import DBCryptFluent
import FluentKit
import Foundation
import NIOPosix
import TestFixtures
import XCTest

/// A database Vapor's SQLite driver wrote (the fixture, made by
/// fluent-sqlite-driver 4.9.0: `Benchmarks/FluentComparison write-fixture`)
/// reads the same through DBCryptFluent once `dbcrypt migrate` has
/// encrypted it; and what DBCryptFluent writes, `dbcrypt decrypt` turns
/// into the very values Vapor's driver wrote.
final class VaporDriverInteropTests: XCTestCase {
    private static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/fluent-sqlite-driver.db").path
    private var directory: URL!
    private var databases: Databases?

    override func setUpWithError() throws {
        directory = try makeTemporaryDirectory(self)
    }

    override func tearDown() async throws {
        await databases?.shutdownAsync()
    }

    private func fluent(_ path: String) -> any FluentKit.Database {
        let databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
        databases.use(.dbcrypt(path: path, key: TestKeys.key), as: .dbcrypt)
        self.databases = databases
        return databases.database(.dbcrypt, logger: .init(label: "interop"), on: MultiThreadedEventLoopGroup.singleton.any())!
    }

    private func dbcrypt(_ arguments: [String]) throws {
        let (status, _, stderr) = try runProgram(dbcryptPath, arguments + ["--key-env", "KEY"], environment: ["KEY": TestKeys.text])
        XCTAssertEqual(status, 0, "dbcrypt \(arguments.first ?? ""): \(stderr)")
    }

    func testADatabaseOfVaporsDriverReadsTheSameOnceEncrypted() async throws {
        let path = directory.appendingPathComponent("vapor.db").path
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: path)
        try dbcrypt(["migrate", path])
        XCTAssertEqual(try FileFormat.detect(at: path), .notPlaintext)

        let db = fluent(path)
        let read = try await Specimen.query(on: db).sort(\.$name).all().map(\.values)
        let expected = Specimen.expected.sorted { $0.name < $1.name }.map(\.values)
        XCTAssertEqual(read, expected)
        // And it goes on: Fluent writes to it, and finds what it wrote.
        let added = Specimen.expected[0]
        added.id = UUID()
        added.name = "quartz, second"
        try await added.create(on: db)
        let found = try await Specimen.find(added.id, on: db)?.values
        XCTAssertEqual(found, added.values)
    }

    /// DBCryptFluent writes the models; `dbcrypt decrypt` exports the file;
    /// every stored value, with its SQLite type, is the one Vapor's driver
    /// stored in the fixture (which that driver reads back: the same
    /// package's `read` command checks it on a decrypted file).
    func testWhatDBCryptFluentWritesDecryptsToWhatVaporsDriverWrites() async throws {
        let path = directory.appendingPathComponent("dbcrypt.db").path
        let db = fluent(path)
        try await CreateSpecimens().prepare(on: db)
        for specimen in Specimen.expected { try await specimen.create(on: db) }
        await databases?.shutdownAsync()
        databases = nil

        let plain = directory.appendingPathComponent("plain.db").path
        try dbcrypt(["decrypt", path, "-o", plain])
        let dump = "SELECT id, typeof(id), name, typeof(name), count, typeof(count), weight, typeof(weight), found_at, typeof(found_at), "
            + "catalogued, typeof(catalogued), note, typeof(note), kind, place, tags, typeof(tags), rank FROM specimens ORDER BY id"
        let ours = try DBCrypt.Database(path: plain).fetchAll(dump).map(Self.comparable)
        let vapors = try DBCrypt.Database(path: Self.fixture, options: readOnly).fetchAll(dump).map(Self.comparable)
        XCTAssertEqual(ours.count, 3)
        XCTAssertEqual(ours, vapors)
    }

    /// A row's values, JSON text parsed: JSONEncoder writes an object's keys
    /// in an order that changes from one process to the next.
    private static func comparable(_ row: Row) -> [String] {
        (0..<row.count).map { index in
            if case .text(let text) = row[index], text.hasPrefix("{") || text.hasPrefix("["),
               let json = try? JSONSerialization.jsonObject(with: Data(text.utf8)),
               let sorted = try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]) {
                return "json " + String(decoding: sorted, as: UTF8.self)
            }
            return "\(row[index])"
        }
    }

    private var readOnly: DBCrypt.Database.Options {
        var options = DBCrypt.Database.Options()
        options.readOnly = true
        return options
    }
}
#endif
