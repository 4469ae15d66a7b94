import CSQLCipher

extension Database {
    /// Changes the key of this encrypted database in place, through
    /// `sqlite3_rekey_v2` (every page is re-encrypted in one transaction).
    ///
    /// SQLCipher's rekey on a plaintext database returns success and leaves
    /// the file plaintext, so this refuses a connection opened without a key:
    /// encrypt a plaintext database with the encryption routines instead.
    ///
    /// - throws: ``DatabaseError/notEncrypted(path:)`` for a connection opened
    ///   without a key, ``DBCryptCore/CipherError/invalidKey(reason:)`` for an empty new
    ///   key, or the ``DatabaseError`` SQLite reports.
    public func changeKey(to newKey: DatabaseKey) throws {
        guard isEncrypted else { throw DatabaseError.notEncrypted(path: path) }
        guard !newKey.isEmpty else {
            throw CipherError.invalidKey(reason: "it is empty, and an empty key would not decrypt the database")
        }
        let db = try connection.open()
        let code = try newKey.withSQLCipherKey { bytes, length in sqlite3_rekey_v2(db, "main", bytes, length) }
        guard code == SQLITE_OK else { throw DatabaseError.fromConnection(db, code: code, sql: nil) }
    }
}
