import Foundation

/// The `-wal` beside a database, looked at before SQLite opens it.
///
/// SQLite reads a log up to the first frame whose checksum or salts do not
/// continue the chain, takes what follows for leftovers, and its next
/// checkpoint drops them: one damaged frame silently loses every commit
/// after it. So a log whose committed transactions SQLite would not all read
/// is refused before any connection can checkpoint, truncate or delete it.
package enum WriteAheadLogFile {
    /// Throws when SQLite would not read every committed transaction of the
    /// log beside `path`. Damage is looked for twice: a writer of another
    /// process appending meanwhile can show a frame half written once. A
    /// log that cannot be read is left for SQLite to report.
    ///
    /// - throws: ``DatabaseError/damagedWriteAheadLog(path:reason:)``.
    static func requireIntact(besideDatabaseAt path: String) throws {
        guard hasFrames(besideDatabaseAt: path), (try? WriteAheadLogDamage.search(besideDatabaseAt: path)) != nil,
              let damage = try? WriteAheadLogDamage.search(besideDatabaseAt: path) else { return }
        throw DatabaseError.damagedWriteAheadLog(path: path, reason: damage.description)
    }

    /// Throws when a frame SQLite would read from the log beside `path` does
    /// not authenticate with `key` under `settings` (which open the file
    /// alone): the log is another database's, or was changed. Read with
    /// the core's reader of the log, before any connection opens it, so that
    /// neither the log nor its index is touched; the file's salt is read
    /// by the core's file reader, which keeps this process's locks. A raw
    /// key with its salt (a passphrase derived once) costs no key
    /// derivation here. Of a damaged log that was accepted, only the frames
    /// SQLite reads (those before the damage) count. Looked at twice, as
    /// ``requireIntact(besideDatabaseAt:)``.
    ///
    /// - throws: ``DatabaseError/writeAheadLogDoesNotDecrypt(path:)``.
    static func requireFramesDecrypt(besideDatabaseAt path: String, key: DatabaseKey, settings: CipherSettings) throws {
        guard let first = authenticate(besideDatabaseAt: path, key: key, settings: settings), !first.failing.isEmpty,
              let again = authenticate(besideDatabaseAt: path, key: key, settings: settings), !again.failing.isEmpty else { return }
        throw DatabaseError.writeAheadLogDoesNotDecrypt(path: path)
    }

    /// Whether frames SQLite would read from the log beside `path`
    /// authenticate with `key` under `settings`, and none fails: the key is
    /// right, whatever the file alone says (its page 1 may be a torn write
    /// the log repairs).
    static func keyOpensLog(besideDatabaseAt path: String, key: DatabaseKey, settings: CipherSettings) -> Bool {
        guard let result = authenticate(besideDatabaseAt: path, key: key, settings: settings) else { return false }
        return result.authenticated > 0 && result.failing.isEmpty
    }

    /// The log's frames authenticated with `key` under `settings`; nil when
    /// the file has no salt or the log cannot be read.
    private static func authenticate(
        besideDatabaseAt path: String, key: DatabaseKey, settings: CipherSettings
    ) -> (authenticated: Int, failing: [WriteAheadLog.Frame])? {
        guard let salt = settings.fileSalt(path, key: key), let cipher = try? PageCipher(key: key, salt: salt, settings: settings) else { return nil }
        return try? WriteAheadLog.authenticate(besideDatabaseAt: path, with: cipher)
    }

    /// Whether a connection of another process has the log beside `path`
    /// open: it holds a read lock on the dead-man switch of the log's index
    /// (`-shm`), or, keeping the index in its own memory (exclusive locking
    /// mode, `unix-excl`), a lock on the file stronger than shared. Such a log
    /// is live, written meanwhile: read without its locks, a frame being
    /// written looks damaged. An index this user may not read counts as
    /// live. Call it only while this process has no connection to the file
    /// (`OpenFiles.contains(_:orElse:)`): the `-shm` is opened and closed
    /// directly.
    static func isOpenInAnotherProcess(besideDatabaseAt path: String) -> Bool {
        let index = open(CompanionFile.shm.path(of: path), O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        // An index this user may not read cannot tell: taken as live, the
        // log is left to SQLite, which reads it as it would without DBCrypt.
        if index < 0 && errno != ENOENT { return true }
        if index >= 0 {
            defer { close(index) }
            // SQLite's unix VFS: the dead-man switch is byte 128 of the index file.
            if SQLiteLocks.lockHolder(index, start: 128, length: 1) != nil { return true }
        }
        return !CheckpointBlock.withSharedLock(onFile: path) {}
    }

    /// Removes the log beside `path` and its index when the log is empty
    /// (what the last connection's close leaves of a folded-in log), and
    /// says whether it was; a log that holds frames is left.
    @discardableResult
    static func removeIfEmpty(besideDatabaseAt path: String) -> Bool {
        let log = CompanionFile.wal.path(of: path)
        guard SiblingFile.size(of: log) == 0 else { return false }
        unlink(log)
        unlink(CompanionFile.shm.path(of: path))
        return true
    }

    /// Whether a `-wal` with at least a frame's worth of bytes after its
    /// header is beside `path`.
    package static func hasFrames(besideDatabaseAt path: String) -> Bool {
        var info = stat()
        return stat(CompanionFile.wal.path(of: path), &info) == 0 && info.st_size > 32 + 24
    }
}
