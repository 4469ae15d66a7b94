import CSQLCipher

// Keying a connection, in the order SQLCipher needs: the key right after
// sqlite3_open_v2, then the cipher settings, then the first read. SQLCipher
// derives nothing and reads nothing until that first read, so keying never
// fails by itself; the read is where a wrong key shows (SQLITE_NOTADB), and
// the connection is only handed out after it succeeded.
extension Connection {
    /// Hands the key to SQLCipher through `sqlite3_key_v2`, never SQL text.
    func applyKey(_ key: DatabaseKey) throws {
        let db = try open()
        let code = key.material.withUnsafeBytes { bytes in
            sqlite3_key_v2(db, "main", bytes.baseAddress, Int32(bytes.count))
        }
        guard code == SQLITE_OK else {
            // SQLite's message for a failed key call never contains the key.
            throw DatabaseError.fromConnection(db, code: code, sql: nil)
        }
    }

    /// Applies the cipher settings, refusing those the linked SQLCipher does not know.
    /// `schema` names an attached database; nil is `main`.
    func applyCipherSettings(_ settings: CipherSettings, library: CipherInfo, schema: String? = nil) throws {
        for (setting, sql) in try settings.pragmas(schema: schema) {
            guard library.supports(setting) else {
                throw DatabaseError.unsupportedCipherSetting(name: setting.rawValue, cipherVersion: library.cipherVersion)
            }
            try run(sql)
        }
    }

    /// Reads the schema, which makes SQLCipher derive the key and decrypt the
    /// first page. SQLITE_NOTADB here means the key (or settings) do not open
    /// the file, or that it is not a database.
    func verifyReadable(path: String) throws {
        do {
            _ = try firstValue("SELECT count(*) FROM sqlite_master")
        } catch let DatabaseError.sqlite(code, _, _) where code & 0xFF == SQLITE_NOTADB {
            throw DatabaseError.wrongKeyOrNotADatabase(path: path)
        }
    }
}
