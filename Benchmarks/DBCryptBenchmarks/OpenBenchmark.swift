import DBCrypt
import DBCryptKeyStore
import Foundation

/// W3: the cost of opening (key derivation, first read), a raw key loaded
/// from a key store on each open against a passphrase, one store lookup,
/// and why a `DatabaseQueue` that keeps one connection matters. The key
/// store rows need a Secret Service (`scripts/keyring-session`, as make
/// bench runs it).
func runOpenBenchmark(rounds: Int) throws {
    _ = try CipherInfo.linked()
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let passphrase = DatabaseKey.passphrase("benchmark passphrase")
    let raw = try DatabaseKey(rawKey: [UInt8](repeating: 0x42, count: 32))
    var cases: [(String, String, DatabaseKey?, CipherSettings)] = []
    for (label, key, settings) in [
        ("passphrase, SQLCipher 4 (256,000 PBKDF2-SHA512)", passphrase as DatabaseKey?, CipherSettings.sqlcipher4),
        ("passphrase, SQLCipher 3 (64,000 PBKDF2-SHA1)", passphrase, CipherSettings.sqlcipher3),
        ("raw key, SQLCipher 4", raw, CipherSettings.sqlcipher4),
        ("no key (plaintext)", nil, CipherSettings.sqlcipher4),
    ] {
        let path = dir.appendingPathComponent("\(cases.count).db").path
        var options = Database.Options()
        options.cipher = settings
        let db = try Database(path: path, key: key, options: options)
        try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        try db.inTransaction { db in for i in 0..<1000 { try db.execute("INSERT INTO t(v) VALUES (?)", ["value \(i)"]) } }
        db.close()
        cases.append((label, path, key, settings))
    }
    // The same file's key kept in a store, loaded on every open, as an app does at launch.
    let stores: [(String, any KeyStore)] = [("the Secret Service", SecretService()), ("the kernel keyring", KernelKeyring())]
    let account = "bench-\(getpid())"
    var stored: [(String, any KeyStore)] = []
    for (name, store) in stores {
        do {
            _ = try DatabaseKey.create(in: store, service: "dbcrypt-bench", account: account)
            stored.append((name, store))
        } catch {
            print("  (no rows for \(name): \(error))")
        }
    }
    defer { for (_, store) in stored { try? DatabaseKey.delete(from: store, service: "dbcrypt-bench", account: account) } }
    var storedPaths: [String] = []
    for (_, store) in stored {
        let path = dir.appendingPathComponent("stored-\(storedPaths.count).db").path
        let db = try Database(path: path, key: try DatabaseKey.load(from: store, service: "dbcrypt-bench", account: account))
        try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        try db.inTransaction { db in for i in 0..<1000 { try db.execute("INSERT INTO t(v) VALUES (?)", ["value \(i)"]) } }
        db.close()
        storedPaths.append(path)
    }

    print("W3 open + key + first query, \(rounds) rounds (wall clock)")
    var samples = [Samples](repeating: Samples(), count: cases.count + stored.count)
    for _ in 0..<rounds {
        for (i, item) in cases.enumerated() {
            var options = Database.Options()
            options.cipher = item.3
            samples[i].add(try seconds {
                let db = try Database(path: item.1, key: item.2, options: options)
                _ = try db.fetchScalar(Int.self, "SELECT count(*) FROM t")
                db.close()
            })
        }
        for (i, (_, store)) in stored.enumerated() {
            samples[cases.count + i].add(try seconds {
                let key = try DatabaseKey.load(from: store, service: "dbcrypt-bench", account: account)
                let db = try Database(path: storedPaths[i], key: key)
                _ = try db.fetchScalar(Int.self, "SELECT count(*) FROM t")
                db.close()
            })
        }
    }
    let labels = cases.map(\.0) + stored.map { "raw key from \($0.0)" }
    for (i, label) in labels.enumerated() {
        let versus = i >= cases.count ? "   passphrase / this \(ratio(samples[0].median, samples[i].median))" : ""
        print("  \(label.padding(toLength: 50, withPad: " ", startingAt: 0)) \(milliseconds(samples[i].median))\(versus)")
    }
    if !stored.isEmpty {
        print("  one key store lookup (DatabaseKey.load), median of \(rounds) rounds of 200:")
        for (name, store) in stored {
            var lookups = Samples()
            for _ in 0..<rounds {
                lookups.add(try seconds {
                    for _ in 0..<200 { _ = try DatabaseKey.load(from: store, service: "dbcrypt-bench", account: account) }
                } / 200)
            }
            print("    \(name.padding(toLength: 28, withPad: " ", startingAt: 0)) \(String(format: "%10.1f µs", lookups.median * 1e6))")
        }
    }

    // One queue for many operations against a connection opened per operation.
    let (label, path, key, settings) = cases[0]
    var options = Database.Options()
    options.cipher = settings
    let queue = try DatabaseQueue(path: path, key: key, options: options)
    let queued = 2_000, reopened = 10
    var queueSamples = Samples(), reopenSamples = Samples()
    for _ in 0..<rounds {
        queueSamples.add(try seconds {
            for i in 0..<queued { _ = try queue.inDatabase { try $0.fetchScalar(String.self, "SELECT v FROM t WHERE id = ?", [i % 1000 + 1]) } }
        } / Double(queued))
        reopenSamples.add(try seconds {
            for i in 0..<reopened {
                let db = try Database(path: path, key: key, options: options)
                _ = try db.fetchScalar(String.self, "SELECT v FROM t WHERE id = ?", [i + 1])
                db.close()
            }
        } / Double(reopened))
    }
    print("  one lookup, \(label):")
    print("    through one DatabaseQueue      \(String(format: "%10.1f µs", queueSamples.median * 1e6))")
    print("    opening a connection for each  \(String(format: "%10.1f µs", reopenSamples.median * 1e6))   ratio \(ratio(reopenSamples.median, queueSamples.median))")
}
