import CSQLCipher
import Foundation

/// When a routine falls back on a page reader (``ExportOptions/pageReader``),
/// and how it opens the file with one.
package enum PageReaderFallback {
    /// Whether only the page reader can read `path` under `cipher`: hashes
    /// other than the format's on an engine with no such setting (SQLCipher
    /// 3.4.1), or, with a page reader, a plaintext-looking file whose salt
    /// or hashes are given (a plaintext header the engine cannot read).
    static func isNeeded(_ path: String, cipher: CipherSettings, pageReader: (any PageReading.Type)?) throws -> Bool {
        guard pageReader != nil else { return false }
        guard linkedReadsHashes(of: cipher) else { return true }
        guard cipher.salt != nil || hasOtherHashes(cipher) else { return false }
        if case .plaintext = try FileFormat.detect(at: path) { return true }
        return false
    }

    /// Whether the linked SQLCipher reads `cipher`'s hashes: the format's
    /// own, or any on an engine with `cipher_hmac_algorithm` (SQLCipher 4.x;
    /// 3.4.1 has none).
    package static func linkedReadsHashes(of cipher: CipherSettings) -> Bool {
        !hasOtherHashes(cipher) || ((try? CipherInfo.linked().supports(.hmacAlgorithm)) ?? false)
    }

    /// Whether `cipher` names hashes other than its format's.
    static func hasOtherHashes(_ cipher: CipherSettings) -> Bool {
        cipher.kdfHash != nil || cipher.hmacHash != nil || !cipher.usesHMAC
    }

    /// Options that open an existing file with `cipher` through the linked
    /// SQLCipher: its hashes only where the engine reads them (on 3.4.1 they
    /// are dropped; the page reader reads them).
    package static func linkedOptions(_ cipher: CipherSettings) -> Database.Options {
        var options = Database.Options()
        options.create = false
        options.cipher = cipher
        if !linkedReadsHashes(of: cipher) {
            (options.cipher.kdfHash, options.cipher.hmacHash, options.cipher.usesHMAC) = (nil, nil, true)
        }
        return options
    }

    /// Whether the linked SQLCipher's `error` may mean settings only the page
    /// reader reads: a page 1 it cannot read (SQLCipher 1 or 2 settings,
    /// other hashes), a plaintext header on 3.4.1 (which has no such
    /// setting), or one whose salt is not given.
    package static func isFor(_ error: any Error) -> Bool {
        switch error {
        case DatabaseError.wrongKeyOrNotADatabase, DatabaseError.notEncrypted, DatabaseError.unsupportedCipherSetting: true
        case let error as DatabaseError: error.resultCode == SQLITE_NOTADB
        case CipherError.invalidSetting(name: "cipher_salt", _): true
        default: false
        }
    }

    /// `path` opened with `reader`: with `cipher` unless it is a standard
    /// format as it comes (then every standard one is tried), and its salt.
    /// A wrong key (``PageReading/isWrongKey(_:)``) is `linkedError` when the
    /// linked SQLCipher said so first, else ``DatabaseError/wrongKeyOrNotADatabase(path:)``,
    /// in the words of every routine; a salt missing or wrong is the reader's own error.
    package static func open<Reader: PageReading>(_ reader: Reader.Type, _ path: String, key: DatabaseKey, cipher: CipherSettings,
                                                  linkedError: DatabaseError? = nil) throws -> Reader {
        var standard = cipher
        standard.salt = nil
        let settings = [CipherSettings.sqlcipher4, .sqlcipher3].contains(standard) ? nil : cipher
        do {
            return try reader.init(path: path, key: key, settings: settings, salt: cipher.salt)
        } catch where reader.isWrongKey(error) {
            throw linkedError ?? DatabaseError.wrongKeyOrNotADatabase(path: path)
        }
    }

    /// Opens the plaintext file a page reader wrote and runs SQLite's integrity check on it.
    ///
    /// - throws: ``DatabaseError/verificationFailed(path:reason:)`` when SQLite finds a problem.
    package static func checkPlaintext(_ path: String) throws {
        var options = Database.Options()
        options.readOnly = true
        options.create = false
        let db = try Database(path: path, key: nil, options: options)
        defer { db.close() }
        let problems = try db.integrityProblems()
        guard problems.isEmpty else {
            throw DatabaseError.verificationFailed(path: path, reason: problems.prefix(3).joined(separator: "; "))
        }
    }
}
