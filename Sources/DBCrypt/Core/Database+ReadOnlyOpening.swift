import Foundation

extension Database {
    /// Opens `path` read-only, as a tool that only reads a database does. A
    /// transaction that a stopped process left unfinished (a hot
    /// `-journal`) is first rolled back, as the first read-write connection
    /// of any SQLite program does by itself, when this process may write the
    /// file and its directory; `rolledBack` is called when it was (even when
    /// the open then fails: SQLite rolls a journal back before it reads the
    /// first page, so even a wrong key may have rolled it back). A `-wal`
    /// is left as it is.
    ///
    /// - throws: the errors of ``init(path:key:options:)``, among them
    ///   ``DatabaseError/unfinishedTransaction(path:)`` when the transaction
    ///   cannot be rolled back by this process.
    public static func openReadOnly(path: String, key: DatabaseKey?, options: Options = Options(),
                                    rolledBack: () -> Void = {}) throws -> Database {
        var readOnly = options
        readOnly.readOnly = true
        do {
            return try Database(path: path, key: key, options: readOnly)
        } catch let unfinished as DatabaseError where unfinished == .unfinishedTransaction(path: path) && mayRollBack(path) {
            var writable = options
            writable.readOnly = false
            writable.create = false
            do {
                try Database(path: path, key: key, options: writable).closeWithoutCheckpoint()
            } catch let error as DatabaseError {
                if !FileManager.default.fileExists(atPath: CompanionFile.journal.path(of: path)) { rolledBack() }
                if case .wrongKeyOrNotADatabase = error { throw error }
                throw unfinished
            }
            rolledBack()
            return try Database(path: path, key: key, options: readOnly)
        }
    }

    /// Whether this process may write the file and its directory, where the
    /// journal is deleted once rolled back.
    private static func mayRollBack(_ path: String) -> Bool {
        access(path, W_OK) == 0 && access(CompanionFile.directory(of: path), W_OK) == 0
    }
}
