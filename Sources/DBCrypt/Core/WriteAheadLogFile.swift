import Foundation
import SQLCipherFormat

/// The `-wal` beside a database, looked at before SQLite opens it.
///
/// SQLite reads a log up to the first frame whose checksum or salts do not
/// continue the chain, takes what follows for leftovers, and its next
/// checkpoint drops them: one damaged frame silently loses every commit
/// after it. So a log whose committed transactions SQLite would not all read
/// is refused before any connection can checkpoint, truncate or delete it.
enum WriteAheadLogFile {
    /// Throws when SQLite would not read every committed transaction of the
    /// log beside `path`. A log that cannot be read is left for SQLite to report.
    ///
    /// - throws: ``DatabaseError/damagedWriteAheadLog(path:reason:)``.
    /// Throws when SQLite would not read every committed transaction of the
    /// log beside `path`. A log that cannot be read is left for SQLite to report.
    ///
    /// - throws: ``DatabaseError/damagedWriteAheadLog(path:reason:)``.
    static func requireIntact(besideDatabaseAt path: String) throws {
        guard hasFrames(besideDatabaseAt: path),
              let damage = try? WriteAheadLogDamage.find(besideDatabaseAt: path) else { return }
        throw DatabaseError.damagedWriteAheadLog(path: path, reason: damage.description)
    }

    /// Throws when a frame SQLite would read from the log beside `path` does
    /// not authenticate with `key` under `settings` (which open the file
    /// alone): the log is another database's, or was changed. Read with
    /// DBCrypt's page reader, before any connection opens the log, so that
    /// neither the log nor its index is touched; the file's salt is read
    /// through SQLite's file layer, which keeps this process's locks. A raw
    /// key with its salt (a passphrase derived once) costs no key
    /// derivation here. Of a damaged log that was accepted, only the frames
    /// SQLite reads (those before the damage) count.
    ///
    /// - throws: ``DatabaseError/writeAheadLogDoesNotDecrypt(path:)``.
    static func requireFramesDecrypt(besideDatabaseAt path: String, key: DatabaseKey, settings: CipherSettings) throws {
        guard let salt = FileSalt.read(path) else { return }
        var parameters: CipherParameters = settings.format == .sqlcipher4 ? .sqlcipher4 : .sqlcipher3
        parameters.pageSize = settings.effectivePageSize
        parameters.kdfIterations = settings.effectiveKDFIterations
        let fileKey = key.withSQLCipherKeyBytes { FileKey.passphrase(bytes: $0) }
        guard let failing = try? EncryptedDatabaseFile.unauthenticatedLogFrames(
            besideDatabaseAt: path, key: fileKey, salt: salt, parameters: parameters), !failing.isEmpty else { return }
        throw DatabaseError.writeAheadLogDoesNotDecrypt(path: path)
    }

    /// Whether a `-wal` with at least a frame's worth of bytes after its
    /// header is beside `path`.
    static func hasFrames(besideDatabaseAt path: String) -> Bool {
        var info = stat()
        return stat(path + "-wal", &info) == 0 && info.st_size > 32 + 24
    }
}
