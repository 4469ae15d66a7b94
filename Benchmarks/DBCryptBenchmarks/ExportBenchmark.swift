import CSQLCipher
import DBCrypt
import Foundation

/// W4: DBCrypt's verified, atomic routines against a bare
/// `ATTACH ... KEY` + `sqlcipher_export` on the same 100k-row database.
func runExportBenchmark(rounds: Int, rows count: Int) throws {
    _ = try CipherInfo.linked()
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let template = dir.appendingPathComponent("template.db").path
    let rows = BenchmarkRows(count: count)
    var db: OpaquePointer?
    sqlite3_open_v2(template, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
    sqlite3_exec(db, createTableSQL + "; CREATE INDEX item_by_b ON item(b)", nil, nil, nil)
    rawInsert(db!, rows)
    sqlite3_close_v2(db)
    let passphrase = "benchmark passphrase"
    let key = DatabaseKey.passphrase(passphrase)

    print("W4 encrypt / decrypt a \(count)-row database (\(SiblingSize.megabytes(template)) MB), SQLCipher 4, passphrase, \(rounds) rounds (wall clock)")
    var migrate = Samples(), bareEncrypt = Samples(), decrypt = Samples(), bareDecrypt = Samples()
    for round in 0..<rounds {
        let work = dir.appendingPathComponent("round\(round)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let plain = work.appendingPathComponent("plain.db").path
        try FileManager.default.copyItem(atPath: template, toPath: plain)
        let bare = work.appendingPathComponent("bare.db").path
        bareEncrypt.add(seconds { bareExport(from: plain, sourceKey: nil, to: bare, key: passphrase) })
        let migrated = work.appendingPathComponent("migrated.db").path
        try FileManager.default.copyItem(atPath: template, toPath: migrated)
        migrate.add(try seconds { try DatabaseEncryption.migrateInPlace(migrated, key: key) })

        let bareOut = work.appendingPathComponent("bare-plain.db").path
        bareDecrypt.add(seconds { bareExport(from: migrated, sourceKey: passphrase, to: bareOut, key: "") })
        let out = work.appendingPathComponent("plain-out.db").path
        decrypt.add(try seconds { try DatabaseEncryption.decrypt(migrated, key: key, to: out) })
        try FileManager.default.removeItem(at: work)
    }
    print("  encrypt   bare export \(milliseconds(bareEncrypt.median))   DBCrypt migrateInPlace \(milliseconds(migrate.median))   ratio \(ratio(migrate.median, bareEncrypt.median))")
    print("  decrypt   bare export \(milliseconds(bareDecrypt.median))   DBCrypt decrypt        \(milliseconds(decrypt.median))   ratio \(ratio(decrypt.median, bareDecrypt.median))")
}

/// The published recipe, through the raw C API: open the source, ATTACH the
/// new file with its key, sqlcipher_export, copy user_version, DETACH. No
/// checks, no atomic replace. SQLCipher 4 settings on the encrypted side.
private func bareExport(from source: String, sourceKey: String?, to destination: String, key: String) {
    var db: OpaquePointer?
    sqlite3_open_v2(source, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)   // ATTACH inherits the flags
    defer { sqlite3_close_v2(db) }
    if let sourceKey {
        _ = dbcrypt_provider_select_mode_sha512 { sqlite3_key_v2(db, "main", sourceKey, Int32(sourceKey.utf8.count)) }
        sqlite3_exec(db, "PRAGMA cipher_page_size = 4096; PRAGMA kdf_iter = 256000", nil, nil, nil)
    }
    var attach: OpaquePointer?
    sqlite3_prepare_v2(db, "ATTACH DATABASE ? AS target KEY ?", -1, &attach, nil)
    sqlite3_bind_text(attach, 1, destination, -1, dbcrypt_transient())
    sqlite3_bind_text(attach, 2, key, -1, dbcrypt_transient())
    let attached = dbcrypt_provider_select_mode_sha512 { sqlite3_step(attach) }
    sqlite3_finalize(attach)
    guard attached == SQLITE_DONE else { fatalError("attach failed: \(String(cString: sqlite3_errmsg(db)))") }
    if !key.isEmpty { sqlite3_exec(db, "PRAGMA target.cipher_page_size = 4096; PRAGMA target.kdf_iter = 256000", nil, nil, nil) }
    guard sqlite3_exec(db, "SELECT sqlcipher_export('target'); PRAGMA target.user_version = 0; DETACH DATABASE target", nil, nil, nil) == SQLITE_OK else {
        fatalError("bare export failed: \(String(cString: sqlite3_errmsg(db)))")
    }
}

import CCipherProvider

/// Runs `body` with DBCrypt's provider creating SQLCipher 4 codecs (on 3.4.1; nothing changes on 4.x).
func dbcrypt_provider_select_mode_sha512<R>(_ body: () -> R) -> R {
    dbcrypt_provider_select_mode(Int32(DBCRYPT_MODE_SHA512))
    defer { dbcrypt_provider_select_mode(Int32(DBCRYPT_MODE_DEFAULT)) }
    return body()
}

enum SiblingSize {
    static func megabytes(_ path: String) -> String {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.doubleValue ?? 0
        return String(format: "%.1f", size / 1_048_576)
    }
}
