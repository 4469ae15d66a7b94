import DBCrypt
import DBCryptFluent
import FluentKit
import FluentSQLiteDriver
import SQLKit
import Foundation

/// The benchmark's model: what a notes or todo API keeps.
final class BenchNote: Model, @unchecked Sendable {
    static let schema = "bench_notes"
    @ID(key: .id) var id: UUID?
    @Field(key: "title") var title: String
    @Field(key: "body") var body: String
    @Field(key: "score") var score: Int
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}
    init(_ n: Int) {
        title = "note \(n)"
        body = String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 4)
        score = n
    }
}

struct CreateBenchNotes: AsyncMigration {
    func prepare(on database: any FluentKit.Database) async throws {
        try await database.schema(BenchNote.schema).id()
            .field("title", .string, .required).field("body", .string, .required)
            .field("score", .int, .required).field("created_at", .datetime)
            .create()
    }
    func revert(on database: any FluentKit.Database) async throws { try await database.schema(BenchNote.schema).delete() }
}

/// One driver's operations per second in each workload, for one round.
struct Rates {
    var insert = 0.0, fetch = 0.0, concurrentFetch = 0.0, mixed = 0.0
}

/// Runs the four workloads on a new database of `configuration`.
func measure(_ configuration: DatabaseConfigurationFactory, operations: Int, wal: Bool = false) async throws -> Rates {
    let databases = makeDatabases(configuration)
    let db = database(databases)
    // The journal mode is kept in the file: every connection of the driver uses it.
    if wal { try await (db as! any SQLDatabase).raw("PRAGMA journal_mode = WAL").run() }
    try await CreateBenchNotes().prepare(on: db)
    var rates = Rates()
    let clock = ContinuousClock()

    var ids: [UUID] = []
    ids.reserveCapacity(operations)
    var elapsed = try await clock.measure {
        for n in 0..<operations {
            let note = BenchNote(n)
            try await note.create(on: db)
            ids.append(note.id!)
        }
    }
    rates.insert = Double(operations) / elapsed.seconds

    elapsed = try await clock.measure {
        for n in 0..<operations {
            guard try await BenchNote.find(ids[(n * 7919) % ids.count], on: db) != nil else { fatalError("a note was not found") }
        }
    }
    rates.fetch = Double(operations) / elapsed.seconds

    let tasks = 8
    let perTask = operations / tasks * 2
    let shared = ids
    elapsed = try await clock.measure {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<tasks {
                group.addTask {
                    let db = database(databases)
                    for n in 0..<perTask {
                        guard try await BenchNote.find(shared[(t * 104_729 + n * 7919) % shared.count], on: db) != nil else {
                            fatalError("a note was not found")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
    }
    rates.concurrentFetch = Double(tasks * perTask) / elapsed.seconds

    elapsed = try await clock.measure {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<tasks {
                group.addTask {
                    let db = database(databases)
                    for n in 0..<perTask {
                        let id = shared[(t * 104_729 + n * 7919) % shared.count]
                        if n % 10 == 9 {
                            try await BenchNote.query(on: db).filter(\.$id == id).set(\.$score, to: n).update()
                        } else if try await BenchNote.find(id, on: db) == nil {
                            fatalError("a note was not found")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
    }
    rates.mixed = Double(tasks * perTask) / elapsed.seconds
    await databases.shutdownAsync()
    return rates
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

func runW11(rounds: Int, operations: Int) async throws {
    let cipher = try CipherInfo.linked()
    print("W11 Fluent CRUD, \(operations) operations a workload, \(rounds) rounds (wall clock, median operations/s)")
    print("DBCrypt: SQLCipher \(cipher.cipherVersion) (SQLite \(cipher.sqliteVersion)), SQLCipher 4 settings, a raw key, WAL pool; "
        + "Vapor: fluent-sqlite-driver 4.9.0, its own SQLite, plaintext")
    var plain: [Rates] = [], plainWAL: [Rates] = [], encrypted: [Rates] = []
    for _ in 0..<rounds {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("w11-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        plain.append(try await measure(.sqlite(.file(folder.appendingPathComponent("plain.db").path), sqlLogLevel: nil),
                                       operations: operations))
        plainWAL.append(try await measure(.sqlite(.file(folder.appendingPathComponent("plain-wal.db").path), sqlLogLevel: nil),
                                          operations: operations, wal: true))
        let key = DatabaseKey.passphrase("x'" + String(repeating: "2b7e1516", count: 8) + "'")
        encrypted.append(try await measure(.dbcrypt(path: folder.appendingPathComponent("encrypted.db").path, key: key, sqlLogLevel: nil),
                                           operations: operations))
    }
    func row(_ name: String, _ rate: KeyPath<Rates, Double>) {
        let p = median(plain.map { $0[keyPath: rate] }), w = median(plainWAL.map { $0[keyPath: rate] })
        let e = median(encrypted.map { $0[keyPath: rate] })
        print(name.padding(toLength: 34, withPad: " ", startingAt: 0)
            + String(format: "%10.0f %10.0f %10.0f %8.2fx %8.2fx", p, w, e, e / p, e / w))
    }
    print("operations/s".padding(toLength: 34, withPad: " ", startingAt: 0)
        + "     Vapor  Vapor+WAL    DBCrypt  /Vapor  /Vapor+WAL")
    row("single-task inserts", \.insert)
    row("single-task fetches by id", \.fetch)
    row("8 tasks fetching", \.concurrentFetch)
    row("8 tasks, 90% fetch / 10% update", \.mixed)
}
