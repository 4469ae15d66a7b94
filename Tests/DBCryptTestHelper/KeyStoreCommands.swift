import DBCrypt
import DBCryptKeyStore
import Foundation

/// The store named on the command line.
func keyStore(_ name: String) -> any KeyStore {
    switch name {
    case "secret-service": SecretService()
    #if os(Linux)
    case "kernel": KernelKeyring()
    #endif
    default: ServiceCredentials()
    }
}

/// `SERVICE/ACCOUNT` split at its first slash.
func serviceAndAccount(_ item: String) -> (String, String) {
    let slash = item.firstIndex(of: "/") ?? item.endIndex
    return (String(item[..<slash]), String(item[slash...].dropFirst()))
}

/// See `key-store-load` in main.swift.
func keyStoreLoad(store name: String, item: String) throws {
    let (service, account) = serviceAndAccount(item)
    do {
        let key = try DatabaseKey.load(from: keyStore(name), service: service, account: account)
        print("found \(key.kind)")
    } catch let error as KeyStoreError {
        let label = switch error {
        case .unavailable: "unavailable"
        case .locked: "locked"
        case .notFound: "notFound"
        case .alreadyExists: "alreadyExists"
        case .notAKey: "notAKey"
        case .writeRefused: "writeRefused"
        case .exposed: "exposed"
        }
        print("\(label): \(error)")
    }
}

/// See `key-store-race` in main.swift.
func keyStoreRace(store name: String, item: String, database: String) throws {
    let (service, account) = serviceAndAccount(item)
    // Every racer starts at once: when the test closes their shared standard input.
    _ = FileHandle.standardInput.readDataToEndOfFile()
    let key = try DatabaseKey.loadOrCreate(in: SlowToWrite(store: keyStore(name)), service: service, account: account)
    let queue = try DatabaseQueue(path: database, key: key)
    try queue.write { db in
        try db.execute("CREATE TABLE IF NOT EXISTS opener(pid INTEGER)")
        try db.execute("INSERT INTO opener(pid) VALUES (?)", [Int(getpid())])
    }
    try queue.close()
}

/// A real store whose writes start 20 ms late, as a busy Secret Service's
/// may: wide enough a window that racers without the creation lock would
/// each keep a key of their own. (A deliberate delay, not a wait: the one
/// sleep scripts/test allows outside Tests/TestFixtures/Waiting.swift.)
struct SlowToWrite: KeyStore {
    let store: any KeyStore
    var name: String { store.name }
    func loadKey(service: String, account: String) throws -> DatabaseKey? { try store.loadKey(service: service, account: account) }
    func storeKey(_ key: DatabaseKey, service: String, account: String) throws {
        usleep(20_000)
        try store.storeKey(key, service: service, account: account)
    }
    func deleteKey(service: String, account: String) throws -> Bool { try store.deleteKey(service: service, account: account) }
}
