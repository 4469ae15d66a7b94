/// Why a continuous backup or a restore failed, with what to do next.
public enum BackupError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The destination could not be read or written.
    case storageFailed(location: String, reason: String)
    /// An object listed a moment before is not there (a backup pruning
    /// removed it, or another process deleted it).
    case objectNotFound(location: String)
    /// The destination has no room for the next object; nothing was lost
    /// from the database, and shipping resumes when there is room.
    case destinationFull(location: String)
    /// The destination holds no backup (no snapshot to start from).
    case noBackup(location: String)
    /// No record there authenticates with the key: another database's backup, or the wrong key.
    case wrongKey(location: String)
    /// The commit asked for is not in the backup; `available` is what is.
    case noSuchCommit(requested: String, available: String)
    /// An object of the backup is damaged, missing or out of place, and the
    /// commit asked for lies past it.
    case damaged(location: String, reason: String)

    public var description: String {
        switch self {
        case let .storageFailed(location, reason):
            "The backup destination \(location) failed: \(reason). Check that it is mounted and writable."
        case let .objectNotFound(location):
            "\(location) is not there: it was listed, then removed (a running backup prunes old records); try again."
        case let .destinationFull(location):
            "The backup destination \(location) is full: free space there; the database keeps what is not shipped until then."
        case let .noBackup(location):
            "\(location) holds no backup: start one with dbcrypt backup --continuous or a pool's continuous backup."
        case let .wrongKey(location):
            "The key does not open the backup in \(location), or it is another database's: check the key."
        case let .noSuchCommit(requested, available):
            "The backup holds no \(requested): it holds \(available)."
        case let .damaged(location, reason):
            "The backup in \(location) is damaged: \(reason)."
        }
    }
}
