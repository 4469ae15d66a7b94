import DBCrypt

/// Opens `path` for a command that only reads it (``Database/openReadOnly(path:key:options:rolledBack:)``),
/// saying on stderr when a stopped process's transaction was rolled back first.
func openForReading(_ path: String, key: DatabaseKey?, options: Database.Options) throws -> Database {
    try Database.openReadOnly(path: path, key: key, options: options) { noteRolledBack(path) }
}

/// Says on stderr that a transaction a stopped process left unfinished in `path` was rolled back.
func noteRolledBack(_ path: String) {
    printError("note: rolled back a transaction that a stopped process left unfinished in \(path).")
}
