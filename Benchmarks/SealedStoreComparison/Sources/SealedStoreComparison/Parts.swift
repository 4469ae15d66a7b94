import Crypto
import CryptoExtras
import DBCrypt
import DBCryptSeal
import Foundation

/// `--parts`: what one operation of the store is made of, each timed alone.
func timeParts(pool: DatabasePool, store: SealedStore) throws {
    let n = 100_000
    let key = SymmetricKey(size: .bits256)
    let sealingKey = SealingKey.random()
    let value = Data(count: 100), name = Data("user.1234.token".utf8), context = Data(count: 60)
    func perOp(_ label: String, _ count: Int = n, _ body: () throws -> Void) rethrows {
        let time = try seconds { for _ in 0..<count { try body() } }
        print(String(format: "  %-44@ %8.2f µs", label as NSString, time / Double(count) * 1e6))
    }
    let nonce = try AES.GCM._SIV.Nonce(data: Data(count: 12))
    try perOp("AES-GCM seal, 100 bytes") { _ = try AES.GCM.seal(value, using: key, authenticating: context) }
    try perOp("AES-GCM-SIV seal, a 15-byte name") { _ = try AES.GCM._SIV.seal(name, using: key, nonce: nonce, authenticating: context) }
    try perOp("SealingKey.seal, 100 bytes") { _ = try sealingKey.seal(value, context: "dbcrypt store 0123456789abcdef0123456789abcdef: entry user.1234.token") }
    let sealed = try sealingKey.seal(value, context: "c")
    try perOp("SealingKey.open, 100 bytes") { _ = try sealingKey.open(sealed, context: "c") }
    try perOp("pool.read { SELECT 1 }", 20_000) { _ = try pool.read { db in try db.fetchScalar(Int.self, "SELECT 1") } }
    try perOp("pool.write { }", 20_000) { try pool.write { _ in } }
    try pool.write { db in
        try db.execute("CREATE TABLE IF NOT EXISTS shaped(store TEXT NOT NULL, name BLOB NOT NULL, value BLOB NOT NULL, key_id INTEGER NOT NULL, PRIMARY KEY(store, name)) WITHOUT ROWID; CREATE INDEX IF NOT EXISTS shaped_key ON shaped(store, key_id)")
    }
    let shapedNames = (0..<1000).map { _ in Data((0..<31).map { _ in UInt8.random(in: 0...255) }) }
    let shapedValue = Data(count: 133)
    var round = 0
    try perOp("INSERT OR REPLACE rows of the store's shape, 1,000 per write", 20) {
        round += 1
        try pool.write { db in for name in shapedNames {
            try db.execute("INSERT OR REPLACE INTO shaped(store, name, value, key_id) VALUES (?, ?, ?, ?)", ["default", name, shapedValue, Int64(round)])
        } }
    }
    try perOp("the same, one prepared statement, execute(values:)", 20) {
        round += 1
        try pool.write { db in
            let insert = try db.makeStatement("INSERT OR REPLACE INTO shaped(store, name, value, key_id) VALUES (?, ?, ?, ?)")
            for name in shapedNames { try insert.execute(values: "default", name, shapedValue, Int64(round)) }
        }
    }
    try perOp("the same, without the key_id index", 20) {
        round += 1
        try pool.write { db in
            try db.execute("DROP INDEX IF EXISTS shaped_key")
            let insert = try db.makeStatement("INSERT OR REPLACE INTO shaped(store, name, value, key_id) VALUES (?, ?, ?, ?)")
            for name in shapedNames { try insert.execute(values: "default", name, shapedValue, Int64(round)) }
        }
    }
    try perOp("store.batch, 1,000 sets per write", 20) {
        try store.batch { entries in for i in 0..<1000 { try entries.set(value, for: "user.\(i).token") } }
    }
    try perOp("store.batch, 1,000 gets per read (entries(in:))", 20) {
        try pool.read { db in for i in 0..<1000 { _ = try store.entries(in: db).get("user.\(i).token") } }
    }
    try pool.read { db in try perOp("SELECT current_key, in a read", 20_000) {
        _ = try db.fetchScalar(Int64.self, "SELECT current_key FROM dbcrypt_sealed_store WHERE name = ?", ["default"])
    } }
}
