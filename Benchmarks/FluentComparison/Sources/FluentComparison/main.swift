// W11: Fluent CRUD through DBCryptFluent (encrypted, SQLCipher 4 settings,
// a raw key) and through fluent-sqlite-driver 4.9.0 (plaintext), same
// models, same machine, one run: single-task inserts, single-task fetches
// by id, 8 concurrent tasks fetching, and a 90/10 read/write mix from 8
// tasks. Wall-clock operations per second, the median of the rounds.
//
//   swift build -c release --package-path Benchmarks/FluentComparison
//   Benchmarks/FluentComparison/.build/release/FluentComparison bench [--rounds N] [--operations N]
//
// And the interoperability fixture (see Tests/DBCryptFluentTests/VaporDriverInteropTests.swift):
//
//   FluentComparison write-fixture PATH   Vapor's driver writes Specimen.expected into a new plaintext PATH
//   FluentComparison write-encrypted PATH DBCryptFluent writes Specimen.expected into a new PATH, keyed with $KEY
//   FluentComparison read PATH            Vapor's driver reads PATH (a decrypted file): exit 0 when it holds Specimen.expected
//   FluentComparison read-encrypted PATH  the same through DBCryptFluent, keyed with $KEY
//
// scripts/fluent-interop runs both directions with `dbcrypt migrate` and `dbcrypt decrypt` between.
import DBCrypt
import DBCryptFluent
import FluentKit
import FluentSQLiteDriver
import Foundation
import NIOPosix

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String, default value: Int) -> Int {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let n = Int(arguments[index + 1]) else { return value }
    return n
}

/// A fresh set of databases: Vapor's SQLite driver, or DBCrypt's.
func makeDatabases(_ configuration: DatabaseConfigurationFactory) -> Databases {
    let databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
    databases.use(configuration, as: .init(string: "bench"))
    return databases
}

func database(_ databases: Databases) -> any FluentKit.Database {
    databases.database(.init(string: "bench"), logger: .init(label: "W11"), on: MultiThreadedEventLoopGroup.singleton.any())!
}

/// Vapor's driver writes the fixture. (In functions, not top-level code: there
/// `try await` may pick Fluent's EventLoopFuture overloads and not wait.)
func writeFixture(_ path: String) async throws {
    try? FileManager.default.removeItem(atPath: path)
    let databases = makeDatabases(.sqlite(.file(path)))
    let db = database(databases)
    try await CreateSpecimens().prepare(on: db)
    for specimen in Specimen.expected { try await specimen.create(on: db) }
    let written = try await Specimen.query(on: db).count()
    await databases.shutdownAsync()
    print("fluent-sqlite-driver wrote \(written) specimens into \(path)")
}

/// DBCryptFluent writes the fixture's values into an encrypted file, keyed
/// with the key text in the environment variable KEY (never an argument).
func writeEncrypted(_ path: String) async throws {
    try? FileManager.default.removeItem(atPath: path)
    let databases = makeDatabases(.dbcrypt(path: path, key: environmentKey()))
    let db = database(databases)
    try await CreateSpecimens().prepare(on: db)
    for specimen in Specimen.expected { try await specimen.create(on: db) }
    await databases.shutdownAsync()
    print("DBCryptFluent wrote \(Specimen.expected.count) specimens into \(path)")
}

/// The environment's key: KEY.
func environmentKey() -> DatabaseKey {
    guard let text = ProcessInfo.processInfo.environment["KEY"] else {
        print("FluentComparison: set KEY to the database's key")
        exit(64)
    }
    return .passphrase(text)
}

/// Vapor's driver (or DBCryptFluent, with `key`) reads a file back: whether
/// it holds the fixture's values.
func readBack(_ path: String, key: DatabaseKey? = nil) async throws -> Bool {
    let databases = makeDatabases(key.map { .dbcrypt(path: path, key: $0) } ?? .sqlite(.file(path)))
    let reader = key == nil ? "fluent-sqlite-driver" : "DBCryptFluent"
    let read = try await Specimen.query(on: database(databases)).sort(\.$name).all().map(\.values)
    await databases.shutdownAsync()
    let expected = Specimen.expected.sorted { $0.name < $1.name }.map(\.values)
    guard read == expected else {
        print("\(reader) read \(read), not \(expected)")
        return false
    }
    print("\(reader) read the \(read.count) specimens back equal")
    return true
}

switch arguments.first {
case "write-fixture" where arguments.count == 2:
    // sqlite-nio takes a relative path elsewhere: always an absolute one.
    try await writeFixture(URL(fileURLWithPath: arguments[1]).path)
case "write-encrypted" where arguments.count == 2:
    try await writeEncrypted(URL(fileURLWithPath: arguments[1]).path)
case "read" where arguments.count == 2:
    guard try await readBack(URL(fileURLWithPath: arguments[1]).path) else { exit(1) }
case "read-encrypted" where arguments.count == 2:
    guard try await readBack(URL(fileURLWithPath: arguments[1]).path, key: environmentKey()) else { exit(1) }
case "bench":
    try await runW11(rounds: option("--rounds", default: 5), operations: option("--operations", default: 2000))
default:
    print("usage: FluentComparison bench [--rounds N] [--operations N] | write-fixture PATH | write-encrypted PATH | read PATH | read-encrypted PATH")
    exit(64)
}
