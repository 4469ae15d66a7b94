@testable import DBCrypt
import Foundation

/// What no byte of a backup destination may hold, for the database at
/// `path` opened with `key`: the row text `marker`, the passphrase, the key
/// derived from it as SQLCipher takes it, and the page key it gives. The
/// directory's and S3's tests scan every object for each.
public func secretsABackupMustNotHold(_ path: String, key: DatabaseKey, passphrase: String, marker: String) throws -> [Data] {
    let db = try Database(path: path, key: key)
    defer { db.close() }
    guard let derived = db.keyForOtherConnections else { throw DatabaseError.notEncrypted(path: path) }
    var needles = [Data(marker.utf8), Data(passphrase.utf8)]
    derived.withSQLCipherKeyBytes { needles.append(Data($0)) }
    let raw = try derived.encryptionKey(salt: [], hash: .sha512, iterations: 1)
    raw.withUnsafeBytes { needles.append(Data($0)) }
    return needles
}
