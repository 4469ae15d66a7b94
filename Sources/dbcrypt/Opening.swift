import DBCrypt
import Foundation

/// Opens `path` for a command that only reads it. A transaction that a
/// stopped process left unfinished is first rolled back, as the first
/// read-write connection of any SQLite program does by itself, when this
/// process may write the file and its directory; a note on stderr says so.
///
/// - throws: the errors of `Database.init(path:key:options:)`, among them
///   `unfinishedTransaction` when the transaction cannot be rolled back here.
func openForReading(_ path: String, key: DatabaseKey?, options: Database.Options) throws -> Database {
    var readOnly = options
    readOnly.readOnly = true
    do {
        return try Database(path: path, key: key, options: readOnly)
    } catch let unfinished as DatabaseError where unfinished == .unfinishedTransaction(path: path) && mayRollBack(path) {
        var writable = options
        writable.readOnly = false
        writable.create = false
        let journal = path + "-journal"
        do {
            try Database(path: path, key: key, options: writable).close()
        } catch let error as DatabaseError {
            // SQLite rolls a journal back before it reads the first page, so
            // even a wrong key may have rolled it back.
            if !FileManager.default.fileExists(atPath: journal) { noteRollback(path) }
            if case .wrongKeyOrNotADatabase = error { throw error }
            throw unfinished
        }
        noteRollback(path)
        return try Database(path: path, key: key, options: readOnly)
    }
}

/// Whether this process may write the file and its directory, where the
/// journal is deleted once rolled back.
private func mayRollBack(_ path: String) -> Bool {
    let folder = (path as NSString).deletingLastPathComponent
    return access(path, W_OK) == 0 && access(folder.isEmpty ? "." : folder, W_OK) == 0
}

private func noteRollback(_ path: String) {
    printError("note: rolled back a transaction that a stopped process left unfinished in \(path).")
}
