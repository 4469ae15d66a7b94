import CSQLCipher
import Foundation

// Keying a connection, in the order SQLCipher needs: the key right after
// sqlite3_open_v2 (with the format chosen as the codec is created), then the
// cipher settings, then the first read. SQLCipher derives nothing and reads
// nothing until that first read, so keying never fails by itself; the read is
// where a wrong key shows (SQLITE_NOTADB), and the connection is only handed
// out after it succeeded. After a failed read the connection is unusable:
// trying other settings takes a fresh connection.
extension Connection {
    /// Hands the key to SQLCipher through `sqlite3_key_v2`, never SQL text,
    /// then applies `settings`.
    func applyKey(_ key: DatabaseKey, settings: CipherSettings, library: CipherInfo) throws {
        let db = try open()
        let code = try library.keying(settings.format) {
            try key.withSQLCipherKey { bytes, length in sqlite3_key_v2(db, "main", bytes, length) }
        }
        guard code == SQLITE_OK else {
            // SQLite's message for a failed key call never contains the key.
            throw DatabaseError.fromConnection(db, code: code, sql: nil)
        }
        try applyCipherSettings(settings, library: library)
    }

    /// Applies `settings` to `schema`, an attached database, or `main` when
    /// nil: the pragmas ``CipherSettings/pragmas(on:)`` names.
    func applyCipherSettings(_ settings: CipherSettings, library: CipherInfo, schema: String? = nil) throws {
        let prefix = schema.map { "PRAGMA \($0)." } ?? "PRAGMA "
        for pragma in try settings.pragmas(on: library) {
            // Validated integers and fixed names only: no caller text reaches the SQL.
            try run(prefix + "\(pragma.name) = \(pragma.value)")
        }
    }

    /// Gives a new, empty file its header and salt: an IMMEDIATE transaction
    /// on an empty file writes page 1. SQLCipher takes a key's salt from the
    /// file when the key is applied, or makes a random one when the file is
    /// empty, so a connection keyed on an empty file must write that salt
    /// before any other connection keys; the write lock makes two
    /// connections agree on who writes it.
    ///
    /// - parameter schema: `main`, or the quoted name of an attached database.
    /// - throws: ``NewFileCreatedMeanwhile`` when another connection wrote
    ///   the file first, with another salt (or another key or format).
    func writeHeaderOfNewFile(schema: String = "main") throws {
        do {
            try run("BEGIN IMMEDIATE")
            _ = try firstValue("SELECT count(*) FROM \(schema).sqlite_master")
            try run("COMMIT")
        } catch let error as DatabaseError where error.resultCode == SQLITE_NOTADB {
            try? run("ROLLBACK")
            throw NewFileCreatedMeanwhile()
        } catch {
            try? run("ROLLBACK")
            throw error
        }
    }

    /// Reads the schema, which makes SQLCipher derive the key and decrypt the
    /// first page. SQLITE_NOTADB here means the key (or settings) do not open
    /// the file, or that it is not a database, and so do, behind a plaintext
    /// header, SQLCipher 4.6's bare "SQL logic error", 4.19's SQLITE_CORRUPT
    /// (a damaged first page there is told by the page reader) and
    /// "unsupported file format" (a header size larger than the file's, whose
    /// ciphertext SQLite then reads as its header's fields); SQLITE_CORRUPT
    /// otherwise, that it is damaged;
    /// SQLITE_READONLY_ROLLBACK and
    /// SQLITE_READONLY_RECOVERY, that a read-only connection met a transaction
    /// a stopped process left unfinished.
    func verifyReadable(path: String, behindPlaintextHeader: Bool) throws {
        do {
            _ = try firstValue("SELECT count(*) FROM sqlite_master")
        } catch let DatabaseError.sqlite(code, message, _)
                    where code & 0xFF == SQLITE_NOTADB || Self.isBareLogicError(code, message)
                    || (behindPlaintextHeader && (code & 0xFF == SQLITE_CORRUPT || message == "unsupported file format")) {
            throw DatabaseError.wrongKeyOrNotADatabase(path: path)
        } catch let DatabaseError.sqlite(code, _, _) where code == Self.readOnlyRollback || code == Self.readOnlyRecovery {
            throw DatabaseError.unfinishedTransaction(path: path)
        } catch let DatabaseError.sqlite(code, message, _) where code & 0xFF == SQLITE_CORRUPT {
            throw DatabaseError.damaged(path: path, reason: message)
        } catch let DatabaseError.sqlite(code, _, _) where code & 0xFF == SQLITE_BUSY {
            throw DatabaseError.databaseInUse(path: path)
        }
    }

    /// Whether an error is SQLite's bare SQLITE_ERROR with its generic
    /// message ("SQL logic error"): what SQLCipher 4.6 leaves when a page
    /// does not decrypt in some reads, where SQLite itself always names
    /// what is wrong.
    static func isBareLogicError(_ code: Int32, _ message: String) -> Bool {
        code == SQLITE_ERROR && message == String(cString: sqlite3_errstr(SQLITE_ERROR))
    }

    /// SQLITE_READONLY_ROLLBACK and SQLITE_READONLY_RECOVERY, extended codes
    /// the C macros of sqlite3.h do not bring to Swift.
    static let readOnlyRollback = SQLITE_READONLY | (3 << 8)
    static let readOnlyRecovery = SQLITE_READONLY | (1 << 8)
}

/// A new file that another connection gave its header between our look at
/// it and our keying: it is opened again, as the existing file it now is.
struct NewFileCreatedMeanwhile: Error {}

// The one place where cipher settings become what the linked SQLCipher
// understands; opening, the pool, the routines and ATTACH all go through it.
//
// - SQLCipher 3.4.x: the format is the DBCrypt provider's mode, chosen as the
//   codec is created (``CipherInfo/keying(_:_:)``); the pragmas set the page
//   size and iterations.
// - SQLCipher 4.x: the format is SQLCipher's own HMAC and KDF algorithm
//   pragmas (what `cipher_compatibility` sets, which has no getter to detect
//   it by), beside the page size and iterations; other hashes, no HMAC and
//   a plaintext header are pragmas too.
extension CipherSettings {
    /// The pragmas, without their schema prefix, that give a connection's
    /// codec these settings on `library`, in the order they are applied.
    ///
    /// - throws: ``DBCryptCore/CipherError/invalidSetting(name:reason:)``, or
    ///   ``DatabaseError/unsupportedCipherSetting(name:cipherVersion:)`` when
    ///   the library lacks a pragma these settings need.
    func pragmas(on library: CipherInfo) throws -> [(name: String, value: String)] {
        try validate()
        guard plaintextHeaderSize <= Self.largestHeaderOnConnections else {
            throw CipherError.invalidSetting(
                name: CipherPragma.plaintextHeaderSize.rawValue,
                reason: "DBCrypt's connections keep at most \(Self.largestHeaderOnConnections) bytes in the clear; "
                    + "read a file with more with SQLCipherFormat's page reader")
        }
        guard hasStandardHMACDetails else {
            throw CipherError.invalidSetting(
                name: "cipher_hmac_pgno",
                reason: "DBCrypt's connections derive the HMAC key and number the pages as SQLCipher does by default; "
                    + "read a file written otherwise with SQLCipherFormat's page reader")
        }
        for setting in [CipherPragma.pageSize, .kdfIterations] where !library.supports(setting) {
            throw DatabaseError.unsupportedCipherSetting(name: setting.rawValue, cipherVersion: library.cipherVersion)
        }
        var pragmas: [(name: String, value: String)] = []
        if library.setsFormatByPragma {
            pragmas.append((CipherPragma.hmacAlgorithm.rawValue, "HMAC_" + (hmacHash ?? formatHash).rawValue))
            pragmas.append((CipherPragma.kdfAlgorithm.rawValue, "PBKDF2_HMAC_" + (kdfHash ?? formatHash).rawValue))
            if !usesHMAC { pragmas.append((CipherPragma.useHMAC.rawValue, "OFF")) }
        } else if hasCustomHashes {
            // DBCrypt's provider on 3.4.x knows the two formats' hashes only;
            // SQLCipherFormat's page reader reads the others.
            let setting: CipherPragma = (kdfHash ?? formatHash) != formatHash ? .kdfAlgorithm : usesHMAC ? .hmacAlgorithm : .useHMAC
            throw DatabaseError.unsupportedCipherSetting(name: setting.rawValue, cipherVersion: library.cipherVersion)
        }
        pragmas.append((CipherPragma.pageSize.rawValue, "\(effectivePageSize)"))
        pragmas.append((CipherPragma.kdfIterations.rawValue, "\(effectiveKDFIterations)"))
        if plaintextHeaderSize > 0 {
            guard library.setsFormatByPragma, library.supports(.plaintextHeaderSize) else {
                throw DatabaseError.unsupportedCipherSetting(name: CipherPragma.plaintextHeaderSize.rawValue, cipherVersion: library.cipherVersion)
            }
            pragmas.append((CipherPragma.plaintextHeaderSize.rawValue, "\(plaintextHeaderSize)"))
            if let salt {
                // Validated bytes as hex digits: no caller text reaches the SQL.
                pragmas.append(("cipher_salt", "\"x'" + Hex.encode(salt) + "'\""))
            }
        }
        return pragmas
    }
}

extension CipherSettings {
    /// The most bytes of page 1 a connection keeps in the clear: 80, so
    /// that bytes 80-91, zero in a plaintext database, stay encrypted and
    /// tell the file from a plaintext database for certain (behind 96 bytes
    /// only bytes 96-100 tell, all but certainly: ``FileFormat/detect(at:)``).
    static let largestHeaderOnConnections = 80

    /// The settings an existing encrypted file is tried with, in order, by
    /// every way DBCrypt opens one (a connection, a pool, `ATTACH`): these,
    /// then, when `otherFormat` and `library` has it, the other standard
    /// format's, each once; with `otherHeaderSizes`, each with every
    /// plaintext header size a connection keeps with those settings, this
    /// one first: only settings with an HMAC, which fails at any other size
    /// (without one, a size that differs garbles only the first blocks, and
    /// page 1 may still read as a database).
    func toTry(on library: CipherInfo, otherFormat: Bool = true, otherHeaderSizes: Bool = false) -> [CipherSettings] {
        let formats = otherFormat && library.formats.contains(format.other) ? [self, fallback] : [self]
        guard otherHeaderSizes else { return formats }
        let sizes = [plaintextHeaderSize] + Self.plaintextHeaderSizes.filter { $0 != plaintextHeaderSize && $0 <= Self.largestHeaderOnConnections }
        return formats.flatMap { settings in
            sizes.compactMap { size in
                guard size == plaintextHeaderSize || settings.usesHMAC else { return nil }
                var sized = settings
                sized.plaintextHeaderSize = size
                return (try? sized.validate()) != nil ? sized : nil
            }
        }
    }

    /// The salt of the file at `path` opened with these settings and `key`:
    /// behind a plaintext header, the one the raw key carries or ``salt``;
    /// otherwise the file's first 16 bytes (nil when it has none yet).
    func fileSalt(_ path: String, key: DatabaseKey?) -> [UInt8]? {
        plaintextHeaderSize > 0 ? key?.salt ?? salt : FileSalt.read(path)
    }

    /// Refuses to open or write a file with a plaintext header when neither
    /// `key` nor these settings carry its salt: such a file does not hold
    /// it, and one SQLCipher made up would be lost with the connection.
    ///
    /// - throws: ``DBCryptCore/CipherError/invalidSetting(name:reason:)`` for `cipher_salt`.
    func requireSalt(for key: DatabaseKey, path: String, library: CipherInfo) throws {
        guard plaintextHeaderSize > 0, library.supports(.plaintextHeaderSize), key.salt == nil, salt == nil else { return }
        throw CipherError.invalidSetting(
            name: "cipher_salt",
            reason: "\(path) keeps its first \(plaintextHeaderSize) bytes in the clear and so does not hold its salt: "
                + "give the salt in the raw key (x'<96 hex digits>') or in CipherSettings.salt")
    }
}
