import DBCrypt
import DBCryptSeal
import Foundation

// What every input is tried against. Kept out of main.swift: libFuzzer's own
// main runs instead of main.swift's top-level code, so globals there would
// never be initialized; globals of other files are, lazily, on first use.
let key = try! SealingKey(bytes: [UInt8](repeating: 7, count: 32), id: 1)
let ring = try! SealingKeyring(current: key, others: [try! SealingKey(bytes: [UInt8](repeating: 8, count: 32), id: 2)])
let envelope = ServerEnvelope(key: key)
let storePath = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-seal-\(getpid()).db").path
let queue: DatabaseQueue = {
    try? FileManager.default.removeItem(atPath: storePath)
    return try! DatabaseQueue(path: storePath)
}()
let store: SealedStore = {
    let store = try! SealedStore(queue, credential: .passphrase("fuzz"), keyDerivation: .pbkdf2SHA256(iterations: 1))
    try! store.set("value", for: "k")
    return store
}()


