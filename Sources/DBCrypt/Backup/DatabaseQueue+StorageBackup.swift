import DBCryptCore
import Foundation

extension DatabaseQueue {
    /// Writes an encrypted copy of the database, as it is at one commit, to
    /// `storage` as the object `name` (an S3 bucket, say), while the app goes
    /// on using the queue.
    ///
    /// ```swift
    /// try queue.backup(to: storage, named: "notes-2026-11-29.db")
    /// ```
    ///
    /// The copy is made as ``backup(to:key:cipher:options:)`` makes it,
    /// checked, in a private temporary directory (mode 0700, removed
    /// afterwards; it holds only encrypted pages), then stored whole.
    /// Objects are never replaced.
    ///
    /// - parameter key: the copy's key: the database's own (the default) or
    ///   another one; a plaintext copy is refused: a storage may be read by others.
    /// - throws: ``DatabaseError/misuse(reason:)`` for a plaintext copy or a
    ///   plaintext database; ``BackupError/objectExists(location:)`` when
    ///   `name` is taken; the storage's errors; those of ``backup(to:key:cipher:options:)``.
    public func backup(to storage: any BackupStorage, named name: String, key: BackupEncryption = .sameAsDatabase, cipher: CipherSettings? = nil,
                       options: ExportOptions = ExportOptions()) throws {
        if case .plaintext = key {
            throw DatabaseError.misuse(reason: "a backup storage gets encrypted copies only: give the copy a key, or back up to a file")
        }
        if case .sameAsDatabase = key, try inDatabase({ $0.cipher }) == nil {
            throw DatabaseError.misuse(reason: "\(path) is not encrypted, and a backup storage gets encrypted copies only: give the copy a key")
        }
        _ = try BackupObjectName.valid(name)
        var template = Array((NSTemporaryDirectory() + "/dbcrypt-backup-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw DatabaseError.cannotOpen(path: NSTemporaryDirectory(), reason: "no temporary directory can be made there: \(String(cString: strerror(errno)))")
        }
        let directory = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let copy = directory + "/" + name
        var writing = options
        writing.replaceExisting = false
        try backup(to: copy, key: key, cipher: cipher, options: writing)
        let data = try Data(contentsOf: URL(fileURLWithPath: copy), options: .alwaysMapped)
        try storage.put(name, data)
    }
}
