import DBCryptCore

/// What a continuous backup shipped last, for the app to keep apart from
/// the destination (a file beside the database, or the key store): a
/// restore given it refuses a destination rolled back to before it, or
/// replaced whole by another backup, which nothing at the destination can
/// show. It holds no secret: the backup's identity, the commit's number, and
/// the number and MAC of the record that holds it.
///
/// ```swift
/// options.shipped = { commit in try? commit.receipt.description.write(toFile: "notes.db-receipt", atomically: true, encoding: .utf8) }
/// ```
public struct BackupReceipt: Sendable, Equatable, LosslessStringConvertible {
    /// The last commit shipped.
    public let commit: UInt64
    /// The number of the record that holds it.
    let record: UInt64
    let backup: BackupIdentity
    let mac: [UInt8]

    init(commit: UInt64, of record: BackupRecord) {
        self.commit = commit
        self.record = record.number
        backup = record.backup
        mac = record.mac
    }

    /// One line: `dbcrypt-backup-receipt 1`, the backup's identity, the
    /// commit, the record's number and its MAC.
    public var description: String {
        "dbcrypt-backup-receipt 1 \(Hex.encode(backup.bytes)) \(commit) \(record) \(Hex.encode(mac))"
    }

    /// The receipt written as ``description``; nil for anything else.
    public init?(_ description: String) {
        let fields = description.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 6, fields[0] == "dbcrypt-backup-receipt", fields[1] == "1",
              let backup = Hex.decode(String(fields[2])), backup.count == 16,
              let commit = UInt64(fields[3]), let record = UInt64(fields[4]),
              let mac = Hex.decode(String(fields[5])), mac.count == 32 else { return nil }
        (self.commit, self.record, self.backup, self.mac) = (commit, record, BackupIdentity(bytes: backup), mac)
    }
}
