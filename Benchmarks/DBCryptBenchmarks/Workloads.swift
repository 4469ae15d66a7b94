import CSQLCipher
import DBCrypt
import Foundation

/// How a W1/W2 database is keyed.
enum Keying: String, CaseIterable {
    case plaintext
    case passphrase1K = "passphrase, 1 KiB pages"
    case rawKey1K = "raw key, 1 KiB pages"
    case rawKey4K = "raw key, 4 KiB pages"

    var key: DatabaseKey? {
        switch self {
        case .plaintext: return nil
        case .passphrase1K: return .passphrase("benchmark passphrase")
        case .rawKey1K, .rawKey4K: return try! DatabaseKey(rawKey: [UInt8](repeating: 0x5A, count: 32))
        }
    }

    /// SQLCipher 3 format (what Debian's library writes natively), with this page size.
    var settings: CipherSettings {
        CipherSettings(.sqlcipher3, pageSize: self == .rawKey4K ? 4096 : 1024, kdfIterations: 64_000)
    }

    var options: Database.Options {
        var options = Database.Options()
        options.cipher = settings
        return options
    }
}

/// A scratch directory for one benchmark, removed by `cleanUp`.
func scratchDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("dbcrypt-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A raw C connection keyed by hand exactly as DBCrypt keys `keying`: both
/// sides of a comparison run on one SQLCipher with one configuration.
func rawConnection(_ path: String, _ keying: Keying) throws -> OpaquePointer {
    var db: OpaquePointer?
    sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)   // as DBCrypt opens its own
    guard let db else { fatalError("cannot open \(path)") }
    let text: String?
    switch keying {
    case .plaintext: text = nil
    case .passphrase1K: text = "benchmark passphrase"
    case .rawKey1K, .rawKey4K: text = "x'" + String(repeating: "5A", count: 32) + "'"
    }
    if let text {
        sqlite3_key_v2(db, "main", text, Int32(text.utf8.count))   // SHA-1 mode: the provider's default, SQLCipher 3
        // SQLCipher 4.x chooses SHA-1 with its own pragmas (3.4.1 ignores them).
        sqlite3_exec(db, "PRAGMA cipher_hmac_algorithm = HMAC_SHA1; PRAGMA cipher_kdf_algorithm = PBKDF2_HMAC_SHA1", nil, nil, nil)
        sqlite3_exec(db, "PRAGMA cipher_page_size = \(keying.settings.effectivePageSize); PRAGMA kdf_iter = 64000", nil, nil, nil)
    }
    guard sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nil, nil, nil) == SQLITE_OK else {
        fatalError("raw keying failed: \(String(cString: sqlite3_errmsg(db)))")
    }
    return db
}
