/// How the copy a backup writes is encrypted.
///
/// ```swift
/// try pool.backup(to: "/mnt/backup/app.db")                                    // the database's key
/// try pool.backup(to: "/mnt/backup/app.db", key: .using(backupKey), cipher: .sqlcipher3)
/// try pool.backup(to: "export.db", key: .plaintext)                            // asked for by name
/// ```
public enum BackupEncryption: Sendable {
    /// The database's own key and cipher settings: the copy opens exactly as
    /// the database does (a passphrase's copy keeps the database's salt, so
    /// the passphrase opens it). A plaintext database's copy is plaintext.
    case sameAsDatabase
    /// Another key, in the backup's `cipher` settings (by default the
    /// database's own).
    case using(DatabaseKey)
    /// No encryption: the copy is a plain SQLite file that anyone who can
    /// read it can read. Never the default.
    case plaintext
}

/// The first name of ``BackupEncryption`` (a choice of encryption, not a key).
@available(*, deprecated, renamed: "BackupEncryption")
public typealias BackupKey = BackupEncryption
