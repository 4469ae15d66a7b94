// W8: DBCryptSeal's sealed store against LevelDB + JSON + AES-GCM, side by
// side in one run, with equal durability: LevelDB's default (unsynced)
// writes against a pool in WAL mode with synchronous = NORMAL. And the
// cost of sealing: the same store's access path on a table of unsealed values.
// And the floor under any store in SQLite: its table through the C API.
// Each both ways: a pool (or C connection) that other processes may open,
// and one exclusive to its process (`exclusiveToThisProcess`, SQLite's
// unix-excl), as a LevelDB database is.
//
//   swift build -c release --package-path Benchmarks/SealedStoreComparison
//   Benchmarks/SealedStoreComparison/.build/release/SealedStoreComparison --rounds 5
import DBCrypt
import DBCryptSeal
import Foundation

let arguments = CommandLine.arguments
let rounds = arguments.firstIndex(of: "--rounds").flatMap { Int(arguments[$0 + 1]) } ?? 5
let entries = 10_000, gets = 20_000, sets = 2_000, batches = 10, batchSize = 1_000
let names = (0..<entries).map { "user.\($0).token" }
var generator = SystemRandomNumberGenerator()
let values = (0..<entries).map { _ in Data((0..<13).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64, Array.init) }.prefix(100)) }
let lookups = (0..<gets).map { _ in Int.random(in: 0..<entries) }

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dbcrypt-w8-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

/// A pool with the durability of LevelDB's default writes; `exclusive`: kept
/// to this process, as a LevelDB database is (its LOCK file).
func makePool(_ name: String, key: DatabaseKey?, exclusive: Bool = false) throws -> DatabasePool {
    var options = Database.Options()
    options.exclusiveToThisProcess = exclusive
    let pool = try DatabasePool(path: path(name), key: key, options: options)
    try pool.writeWithoutTransaction { db in try db.execute("PRAGMA synchronous = NORMAL; PRAGMA cache_size = -8192") }
    return pool
}

/// The store's own access path on values that are not sealed: the same
/// statements and transactions through the pool, on a table of plain values.
/// `tagged` gives it the store's shape too (the issue's "unsealed value in
/// the same store"): rows keyed by a 16-byte tag of the name, so in an order
/// unrelated to the names, with the name beside it. The tag is a cheap
/// non-cryptographic hash (Hasher, twice), and the name is stored as it is,
/// so the table does less than the store with its sealing taken out.
/// Untagged, rows are keyed by the names themselves.
struct UnsealedTable {
    let pool: DatabasePool
    let table: String
    let tagged: Bool
    init(pool: DatabasePool, tagged: Bool) throws {
        self.pool = pool
        self.tagged = tagged
        table = tagged ? "tagged_entry" : "plain_entry"
        try pool.write { db in
            try db.execute("CREATE TABLE IF NOT EXISTS \(table)(store TEXT NOT NULL, tag BLOB NOT NULL, name BLOB, value BLOB NOT NULL, PRIMARY KEY(store, tag)) WITHOUT ROWID")
        }
    }
    func tag(_ name: String) -> Data {
        guard tagged else { return Data(name.utf8) }
        var first = Hasher(), second = Hasher()
        first.combine(0 as UInt8)
        first.combine(name)
        second.combine(1 as UInt8)
        second.combine(name)
        return withUnsafeBytes(of: (first.finalize(), second.finalize())) { Data($0) }
    }
    func set(_ db: Database, _ value: Data, _ name: String) throws {
        let tag = tag(name)
        try db.cachedStatement("UPDATE \(table) SET value = ? WHERE store = ? AND tag = ?").execute(values: value, "default", tag)
        if db.changes == 0 {
            try db.cachedStatement("INSERT INTO \(table)(store, tag, name, value) VALUES (?, ?, ?, ?)")
                .execute(values: "default", tag, tagged ? Data(name.utf8) : nil, value)
        }
    }
    func get(_ name: String) throws -> Data? {
        try pool.unsafeRead { db in
            try db.cachedStatement("SELECT value FROM \(table) WHERE store = ? AND tag = ?").query(values: "default", tag(name)).next()?[0]
        }
    }
}

let baseline = try LevelDBJSONStore(path: path("leveldb"), password: "benchmark password")
let plainPool = try makePool("plain.db", key: nil)
let store = try SealedStore(plainPool, credential: .passphrase("benchmark password"))
let unsealed = try UnsealedTable(pool: plainPool, tagged: true)
let byName = try UnsealedTable(pool: plainPool, tagged: false)
let encryptedPool = try makePool("encrypted.db", key: .passphrase("database passphrase"))
let encryptedStore = try SealedStore(encryptedPool, credential: .passphrase("benchmark password"))
let exclusivePool = try makePool("exclusive.db", key: nil, exclusive: true)
let exclusiveStore = try SealedStore(exclusivePool, credential: .passphrase("benchmark password"))
/// A random 16-byte tag for each entry, as the store's lookup tags are.
func randomTags() -> [[UInt8]] { (0..<entries).map { _ in (0..<16).map { _ in UInt8.random(in: 0...255) } } }
let raw = RawSQLiteTable(path: path("raw.db"), tags: randomTags(), value: values[0])
let rawExcl = RawSQLiteTable(path: path("rawexcl.db"), tags: randomTags(), value: values[0], vfs: "unix-excl")
for i in 0..<entries {
    try baseline.set(values[i], for: names[i])
}
for target in [store, encryptedStore, exclusiveStore] {
    try target.batch { batch in for i in 0..<entries { try batch.set(values[i], for: names[i]) } }
}
for table in [unsealed, byName] {
    try plainPool.write { db in for i in 0..<entries { try table.set(db, values[i], names[i]) } }
}

if arguments.contains("--parts") {
    try timeParts(pool: plainPool, store: store)
    exit(0)
}

print("W8 sealed key-value store, \(entries) entries of 100 bytes, \(rounds) rounds (wall clock, operations per second)")
var results: [String: Samples] = [:]
/// `--only LABEL`: run only the workload of that label, as printed (for a profiler).
let only = arguments.firstIndex(of: "--only").map { arguments[$0 + 1] }
@MainActor func measure(_ label: String, operations: Int, _ body: () throws -> Void) rethrows {
    if let only, label != only { return }
    results[label, default: Samples()].add(Double(operations) / (try seconds(body)))
}
for round in 0..<rounds {
    try measure("get: LevelDB + JSON", operations: gets) { for i in lookups { _ = try baseline.get(names[i]) } }
    try measure("get: sealed store", operations: gets) { for i in lookups { _ = try store.get(names[i]) } }
    try measure("get: sealed store, encrypted file", operations: gets) { for i in lookups { _ = try encryptedStore.get(names[i]) } }
    try measure("get: sealed store, exclusive to its process", operations: gets) { for i in lookups { _ = try exclusiveStore.get(names[i]) } }
    for (table, label) in [(unsealed, "unsealed values"), (byName, "table by name")] {
        try measure("get: \(label)", operations: gets) { for i in lookups { _ = try table.get(names[i]) } }
    }
    measure("get: raw C SQLite", operations: gets) { _ = raw.get(lookups) }
    measure("get: raw C SQLite, exclusive to its process", operations: gets) { _ = rawExcl.get(lookups) }

    try measure("set: LevelDB + JSON", operations: sets) { for i in 0..<sets { try baseline.set(values[i], for: names[i]) } }
    try measure("set: sealed store", operations: sets) { for i in 0..<sets { try store.set(values[i], for: names[i]) } }
    try measure("set: sealed store, encrypted file", operations: sets) { for i in 0..<sets { try encryptedStore.set(values[i], for: names[i]) } }
    try measure("set: sealed store, exclusive to its process", operations: sets) { for i in 0..<sets { try exclusiveStore.set(values[i], for: names[i]) } }
    for (table, label) in [(unsealed, "unsealed values"), (byName, "table by name")] {
        try measure("set: \(label)", operations: sets) {
            for i in 0..<sets { try plainPool.write { db in try table.set(db, values[i], names[i]) } }
        }
    }
    raw.truncateLog()
    measure("set: raw C SQLite", operations: sets) { raw.set(0..<sets, value: values[1]) }
    rawExcl.truncateLog()
    measure("set: raw C SQLite, exclusive to its process", operations: sets) { rawExcl.set(0..<sets, value: values[1]) }

    let batch = { (b: Int) in (0..<batchSize).map { (names[(b * batchSize + $0) % entries], values[$0]) } }
    try measure("batch of 1,000: LevelDB + JSON", operations: batches * batchSize) {
        for b in 0..<batches { try baseline.set(batch: batch(b)) }
    }
    try measure("batch of 1,000: sealed store", operations: batches * batchSize) {
        for b in 0..<batches { try store.batch { entries in for (name, value) in batch(b) { try entries.set(value, for: name) } } }
    }
    try measure("batch of 1,000: sealed store, encrypted file", operations: batches * batchSize) {
        for b in 0..<batches { try encryptedStore.batch { entries in for (name, value) in batch(b) { try entries.set(value, for: name) } } }
    }
    try measure("batch of 1,000: sealed store, exclusive to its process", operations: batches * batchSize) {
        for b in 0..<batches { try exclusiveStore.batch { entries in for (name, value) in batch(b) { try entries.set(value, for: name) } } }
    }
    for (table, label) in [(unsealed, "unsealed values"), (byName, "table by name")] {
        try measure("batch of 1,000: \(label)", operations: batches * batchSize) {
            for b in 0..<batches { try plainPool.write { db in for (name, value) in batch(b) { try table.set(db, value, name) } } }
        }
    }
    raw.truncateLog()
    measure("batch of 1,000: raw C SQLite", operations: batches * batchSize) {
        for b in 0..<batches { raw.batch(b * batchSize..<(b + 1) * batchSize, value: values[2]) }
    }
    rawExcl.truncateLog()
    measure("batch of 1,000: raw C SQLite, exclusive to its process", operations: batches * batchSize) {
        for b in 0..<batches { rawExcl.batch(b * batchSize..<(b + 1) * batchSize, value: values[2]) }
    }

    if round < 3 {
        // Opening with the password: each with its own derivation, then ours with the baseline's.
        try measure("open: LevelDB + JSON (PBKDF2-SHA256, 100,000 rounds)", operations: 1) {
            _ = try LevelDBJSONStore(path: path("leveldb-open"), password: "benchmark password")
        }
        try measure("open: sealed store (Argon2id, 64 MiB, 3 passes)", operations: 1) {
            _ = try SealedStore(plainPool, credential: .passphrase("benchmark password"), create: false)
        }
        try measure("open: sealed store (PBKDF2-SHA256, 100,000 rounds)", operations: 1) {
            _ = try SealedStore(plainPool, name: "pbkdf2", credential: .passphrase("benchmark password"),
                                keyDerivation: .pbkdf2SHA256(iterations: 100_000))
        }
    }
}

@MainActor func line(_ label: String, against reference: String? = nil, inverse: Bool = false) {
    guard let sample = results[label] else { return }
    var text = String(format: "  %-52@ %10.0f /s", label as NSString, sample.median)
    if let reference, let other = results[reference] {
        let ratio = inverse ? other.median / sample.median : sample.median / other.median
        text += String(format: "   %5.2fx %@", ratio, inverse ? "the time of \(reference)" : "of \(reference)")
    }
    print(text)
}
for operation in ["get", "set", "batch of 1,000"] {
    line("\(operation): LevelDB + JSON")
    line("\(operation): sealed store", against: "\(operation): LevelDB + JSON")
    line("\(operation): sealed store, encrypted file", against: "\(operation): LevelDB + JSON")
    line("\(operation): unsealed values")
    line("\(operation): sealed store", against: "\(operation): unsealed values", inverse: true)
    line("\(operation): table by name")
    line("\(operation): raw C SQLite", against: "\(operation): LevelDB + JSON")
    line("\(operation): sealed store", against: "\(operation): raw C SQLite", inverse: true)
    line("\(operation): sealed store, exclusive to its process", against: "\(operation): LevelDB + JSON")
    line("\(operation): raw C SQLite, exclusive to its process", against: "\(operation): LevelDB + JSON")
    line("\(operation): sealed store, exclusive to its process", against: "\(operation): raw C SQLite, exclusive to its process", inverse: true)
}
for label in ["open: LevelDB + JSON (PBKDF2-SHA256, 100,000 rounds)", "open: sealed store (Argon2id, 64 MiB, 3 passes)",
              "open: sealed store (PBKDF2-SHA256, 100,000 rounds)"] {
    guard let sample = results[label] else { continue }
    print(String(format: "  %-52@ %10.1f ms", label as NSString, 1000 / sample.median))
}
