import Crypto
import DBCrypt
import DBCryptSeal
import Foundation

/// `--parts`: what one operation of the store is made of, each timed alone.
func timeParts(pool: DatabasePool, store: SealedStore) throws {
    let n = 100_000
    let key = SymmetricKey(size: .bits256)
    let sealingKey = SealingKey.random()
    let value = Data(count: 100), context = Data(count: 60)
    /// Runs `body` until `count` operations are done (`body` does `perCall` of them).
    func perOp(_ label: String, _ count: Int = n, perCall: Int = 1, _ body: () throws -> Void) rethrows {
        let time = try seconds { for _ in 0..<(count / perCall) { try body() } }
        print(String(format: "  %-44@ %8.2f µs", label as NSString, time / Double(count) * 1e6))
    }
    try perOp("AES-GCM seal, 100 bytes (swift-crypto)") { _ = try AES.GCM.seal(value, using: key, authenticating: context) }
    try perOp("SealingKey.seal, 100 bytes") { _ = try sealingKey.seal(value, context: "dbcrypt store 0123456789abcdef0123456789abcdef: entry user.1234.token") }
    let sealed = try sealingKey.seal(value, context: "c")
    try perOp("SealingKey.open, 100 bytes") { _ = try sealingKey.open(sealed, context: "c") }
    try perOp("pool.read { SELECT 1 }", 20_000) { _ = try pool.read { db in try db.fetchScalar(Int.self, "SELECT 1") } }
    try perOp("pool.write { }", 20_000) { try pool.write { _ in } }
    try perOp("store.batch, 1,000 sets per write (a set)", 20_000, perCall: 1000) {
        try store.batch { entries in for i in 0..<1000 { try entries.set(value, for: "user.\(i).token") } }
    }
    try perOp("store.batch, 1,000 gets per read (a get)", 20_000, perCall: 1000) {
        try pool.read { db in for i in 0..<1000 { _ = try store.entries(in: db).get("user.\(i).token") } }
    }
    try pool.read { db in try perOp("SELECT current_key, in a read", 20_000) {
        _ = try db.fetchScalar(Int64.self, "SELECT current_key FROM dbcrypt_sealed_store WHERE name = ?", ["default"])
    } }
}
