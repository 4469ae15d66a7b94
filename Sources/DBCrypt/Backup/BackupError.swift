/// Why a continuous backup or a restore failed, with what to do next.
public enum BackupError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The destination could not be read or written.
    case storageFailed(location: String, reason: String)
    /// The destination refused the request for good (a wrong credential,
    /// no such bucket, a permission missing, a clock that is off): `reason`
    /// says which, and what to change. Retrying does not help.
    case storageRefused(location: String, reason: String)
    /// An object listed a moment before is not there (a backup pruning
    /// removed it, or another process deleted it).
    case objectNotFound(location: String)
    /// The destination has no room for the next object; nothing was lost
    /// from the database, and shipping resumes when there is room.
    case destinationFull(location: String)
    /// The log grew past ``ContinuousBackup/Options/maximumBacklog`` while
    /// the destination could not be written: the backup let go of it, so
    /// the app's log stays bounded, and begins with a new snapshot once
    /// the destination takes writes again.
    case backlogTooLarge(location: String, bytes: Int64)
    /// Another backup writes to the destination now: a destination has one writer at a time.
    case destinationInUse(location: String)
    /// An object of that name is already there, and objects are never
    /// replaced: another backup wrote into the destination.
    case objectExists(location: String)
    /// The database's path now names another file than the one the backup
    /// began with: the backup stopped, and the new file is not in it.
    case databaseReplaced(path: String)
    /// The backup is not what a receipt of it says: replaced by another,
    /// or rolled back to before the receipt's commit.
    case notAsExpected(location: String, reason: String)
    /// The destination holds no backup (no snapshot to start from).
    case noBackup(location: String)
    /// No record there authenticates with the key: another database's backup, or the wrong key.
    case wrongKey(location: String)
    /// The commit asked for is not in the backup; `available` is what is.
    case noSuchCommit(requested: String, available: String)
    /// An object of the backup is damaged, missing or out of place, and the
    /// commit asked for lies past it.
    case damaged(location: String, reason: String)
    /// The receipt of a commit shipped could not be written to `path`
    /// (``ContinuousBackup/Options/receiptPath``): the backup goes on, and
    /// the next commit's receipt tries again.
    case receiptNotWritten(commit: UInt64, path: String, reason: String)
    /// The receipt file at `path` cannot be read.
    case receiptUnreadable(path: String, reason: String)
    /// The file at `path` does not hold a receipt.
    case notAReceipt(path: String)

    public var description: String {
        switch self {
        case let .storageFailed(location, reason):
            "The backup destination \(location) failed: \(reason). Check that it can be reached and written."
        case let .storageRefused(location, reason):
            "The backup destination \(location) refused the request: \(reason)."
        case let .objectNotFound(location):
            "\(location) is not there: it was listed, then removed (a running backup prunes old records); try again."
        case let .destinationFull(location):
            "The backup destination \(location) is full: free space there; the database keeps what is not shipped until then."
        case let .backlogTooLarge(location, bytes):
            "\(location) could not be written while the database's log grew to \(bytes / 1_048_576) MiB: the backup let go of the commits not shipped so checkpoints go on, and begins with a new snapshot once \(location) takes writes again."
        case let .destinationInUse(location):
            "Another backup is writing to \(location): stop it first, or back up to another destination."
        case let .objectExists(location):
            "\(location) is already there, and backup records are never replaced: another backup wrote into this destination. Back up to a new destination."
        case let .databaseReplaced(path):
            "\(path) was replaced by another file while its backup ran: the backup stopped, and the new file is not in it. Back up the new file to a new destination."
        case let .notAsExpected(location, reason):
            "The backup in \(location) is not the one its receipt expects: \(reason). Restore from another copy of it; without the receipt, a restore takes what is there."
        case let .noBackup(location):
            "\(location) holds no backup: start a continuous backup into it first."
        case let .wrongKey(location):
            "The key does not open the backup in \(location), or it is another database's: check the key."
        case let .noSuchCommit(requested, available):
            "The backup holds no \(requested): it holds \(available)."
        case let .damaged(location, reason):
            "The backup in \(location) is damaged: \(reason)."
        case let .receiptNotWritten(commit, path, reason):
            "The receipt of commit \(commit) could not be written to \(path): \(reason)."
        case let .receiptUnreadable(path, reason):
            "The receipt \(path) cannot be read: \(reason)."
        case let .notAReceipt(path):
            "\(path) is not a receipt: give the file a continuous backup wrote its receipts to."
        }
    }
}

extension BackupError: DBCryptError {
    /// What kind of failure this is: ``DBCryptErrorCategory/wrongKey`` when
    /// no record authenticates with the key, ``DBCryptErrorCategory/damaged``
    /// for records altered, missing or not what a receipt expects.
    public var category: DBCryptErrorCategory {
        switch self {
        case .wrongKey: .wrongKey
        case .damaged, .notAsExpected: .damaged
        case .objectNotFound, .noBackup, .noSuchCommit: .notFound
        case .objectExists: .exists
        case .storageFailed, .storageRefused, .destinationFull, .backlogTooLarge, .destinationInUse, .databaseReplaced, .receiptNotWritten, .receiptUnreadable: .storage
        case .notAReceipt: .misuse
        }
    }

    /// Whether this error, given to ``ContinuousBackup/Options/failed``,
    /// ended the backup for good (its database's path names another file,
    /// or another writer took the destination), rather than failing one
    /// round that the next tries again.
    public var endsContinuousBackup: Bool {
        switch self {
        case .databaseReplaced, .destinationInUse: true
        default: false
        }
    }
}
