import DBCrypt
import Foundation

/// Opens `path` for a command that only reads it. A transaction that a
/// stopped process left unfinished is first rolled back, as the first
/// read-write connection of any SQLite program does by itself, when this
/// process may write the file; a note on stderr says so.
///
/// - throws: the errors of `Database.init(path:key:options:)`, among them
///   `unfinishedTransaction` when the file may not be written.
func openForReading(_ path: String, key: DatabaseKey?, options: Database.Options) throws -> Database {
    var readOnly = options
    readOnly.readOnly = true
    do {
        return try Database(path: path, key: key, options: readOnly)
    } catch DatabaseError.unfinishedTransaction where access(path, W_OK) == 0 {
        var writable = options
        writable.readOnly = false
        writable.create = false
        try Database(path: path, key: key, options: writable).close()
        printError("note: rolled back a transaction that a stopped process left unfinished in \(path).")
        return try Database(path: path, key: key, options: readOnly)
    }
}
