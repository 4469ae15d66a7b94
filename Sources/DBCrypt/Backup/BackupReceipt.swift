import DBCryptCore
import Foundation

/// What a continuous backup shipped last, for the app to keep apart from
/// the destination (a file beside the database, or the key store): a
/// restore given it refuses a destination rolled back to before it, or
/// replaced whole by another backup, which nothing at the destination can
/// show. It holds no secret: the backup's identity, the commit's number, and
/// the number and MAC of the record that holds it.
///
/// ```swift
/// options.receiptPath = "/var/lib/app/notes.db-receipt"   // each commit's receipt, written whole
/// let receipt = try BackupReceipt(contentsOf: "/var/lib/app/notes.db-receipt")
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

    /// The receipt in the file at `path`, as ``ContinuousBackup/Options/receiptPath``
    /// writes it (its first 4 KiB, whitespace around it ignored).
    ///
    /// - throws: ``BackupError/receiptUnreadable(path:reason:)`` when the
    ///   file cannot be read, ``BackupError/notAReceipt(path:)`` when it
    ///   holds anything else.
    public init(contentsOf path: String) throws {
        let bytes: [UInt8]
        do throws(FileError) {
            let reader = try FileReader(path: path)
            bytes = try reader.read(Int(min(reader.size, 4096)), at: 0)
        } catch {
            throw BackupError.receiptUnreadable(path: path, reason: error.reason)
        }
        guard let receipt = BackupReceipt(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BackupError.notAReceipt(path: path)
        }
        self = receipt
    }

    /// Writes the receipt to `path` whole or not at all, as ``description``
    /// and a newline (a sibling file, flushed, renamed over it, the folder flushed).
    func write(to path: String) throws(FileError) {
        try SiblingFile.replace(path, with: Data((description + "\n").utf8))
    }
}
