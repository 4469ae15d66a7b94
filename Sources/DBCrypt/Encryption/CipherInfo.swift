import CCipherProvider
import CSQLCipher

/// What the linked SQLCipher is and what it can do.
///
/// ```swift
/// let info = try CipherInfo.linked()
/// print(info.cipherVersion, info.provider)      // "3.4.1" "dbcrypt-openssl"
/// info.formats                                  // [.sqlcipher3, .sqlcipher4]
/// ```
///
/// On SQLCipher 3.4.x, probing installs DBCrypt's own crypto provider, which
/// gives it the SQLCipher 4 format; SQLCipher 4.x has both formats natively.
/// SQLCipher 3.4.1 silently ignores pragmas it does not know, so a setting's
/// support is detected by whether its pragma returns a row on a keyed connection.
public struct CipherInfo: Sendable, Equatable {
    /// `PRAGMA cipher_version`, for example `3.4.1`.
    public let cipherVersion: String
    /// The SQLite version SQLCipher is built on (`sqlite_version()`).
    public let sqliteVersion: String
    /// The crypto provider's name (`PRAGMA cipher_provider`): `dbcrypt-openssl`
    /// when DBCrypt's provider is installed.
    public let provider: String
    /// The crypto provider's version, when the library reports it.
    public let providerVersion: String?
    /// The cipher settings whose pragmas the linked library answers.
    public let supportedSettings: Set<CipherPragma>
    /// The file formats this process can read and write.
    public let formats: Set<CipherSettings.Format>
    /// Whether DBCrypt's provider was installed (the linked SQLCipher is 3.4.x).
    public let usesDBCryptProvider: Bool

    /// Whether SQLCipher's own HMAC and KDF algorithm pragmas choose the
    /// format (SQLCipher 4.x), rather than DBCrypt's provider (3.4.x).
    var setsFormatByPragma: Bool {
        !usesDBCryptProvider && supports(.hmacAlgorithm) && supports(.kdfAlgorithm)
    }

    /// Whether the linked library has `PRAGMA cipher_integrity_check`,
    /// which authenticates every page of an open database (SQLCipher 4.x;
    /// on 3.4.1, SQLCipherFormat's page reader does it).
    public var hasCipherIntegrityCheck: Bool { setsFormatByPragma }

    /// Whether the linked library supports `setting`.
    public func supports(_ setting: CipherPragma) -> Bool { supportedSettings.contains(setting) }

    /// The linked library's information, probed once per process on an
    /// in-memory connection; on SQLCipher 3.4.x this first installs DBCrypt's
    /// crypto provider. Every connection DBCrypt opens calls it first.
    ///
    /// - throws: ``DatabaseError/notSQLCipher(sqliteVersion:)`` when the linked
    ///   library is plain SQLite.
    public static func linked() throws -> CipherInfo {
        try cached.get()
    }

    private static let cached: Result<CipherInfo, DatabaseError> = {
        do { return .success(try probe()) } catch let error as DatabaseError { return .failure(error) } catch {
            return .failure(.cannotOpen(path: ":memory:", reason: "\(error)"))
        }
    }()

    private static func probe() throws -> CipherInfo {
        let sqliteVersion = String(cString: sqlite3_libversion())
        let unkeyed = try Connection.openInMemory()
        guard case let .text(version)? = try unkeyed.firstValue("PRAGMA cipher_version") else {
            throw DatabaseError.notSQLCipher(sqliteVersion: sqliteVersion)
        }
        unkeyed.close()
        // Installed before any connection is keyed: SQLCipher 3.4.x registers
        // providers without a lock until its first activation.
        let usesProvider = version.hasPrefix("3.4.")
        if usesProvider {
            let code = dbcrypt_provider_install()
            guard code == SQLITE_OK else {
                throw DatabaseError.cannotOpen(path: ":memory:", reason: "installing DBCrypt's crypto provider failed (\(code))")
            }
        }

        let connection = try Connection.openInMemory()
        defer { connection.close() }
        // SQLCipher 4.x logs every failed page check ("hmac check failed
        // for pgno=1": any wrong key) to stderr; DBCrypt reports its errors
        // itself. Process-wide; 3.4.1 has no log. 4.6 logs errors whatever
        // the level until no source is logged.
        for pragma in ["cipher_log_source", "cipher_log_level"] where try connection.firstValue("PRAGMA \(pragma)") != nil {
            try connection.run("PRAGMA \(pragma) = NONE")
        }
        // Cipher pragmas answer only once a codec is attached, that is, after a key.
        let db = try connection.open()
        _ = sqlite3_key_v2(db, "main", "probe", 5)
        var supported: Set<CipherPragma> = []
        for setting in CipherPragma.allCases where try connection.firstValue("PRAGMA \(setting.rawValue)") != nil {
            supported.insert(setting)
        }
        func text(_ sql: String) throws -> String? {
            switch try connection.firstValue(sql) {
            case let .text(t)?: return t
            case let .integer(i)?: return String(i)
            default: return nil
            }
        }
        var formats: Set<CipherSettings.Format> = [.sqlcipher3]
        if usesProvider || (supported.contains(.hmacAlgorithm) && supported.contains(.kdfAlgorithm)) { formats.insert(.sqlcipher4) }
        return CipherInfo(
            cipherVersion: version,
            sqliteVersion: try text("SELECT sqlite_version()") ?? sqliteVersion,
            provider: try text("PRAGMA cipher_provider") ?? "unknown",
            providerVersion: try text("PRAGMA cipher_provider_version"),
            supportedSettings: supported,
            formats: formats,
            usesDBCryptProvider: usesProvider)
    }

    /// Runs `body` (which keys a connection or attaches a keyed database) so
    /// that the codecs it creates use `format`: on SQLCipher 3.4.x by choosing
    /// the provider's mode for this thread around `body`.
    ///
    /// - throws: ``DatabaseError/unsupportedCipherSetting(name:cipherVersion:)``
    ///   when the library cannot write `format`, or what `body` throws.
    func keying<R>(_ format: CipherSettings.Format, _ body: () throws -> R) throws -> R {
        guard formats.contains(format) else {
            throw DatabaseError.unsupportedCipherSetting(name: "format \(format.rawValue)", cipherVersion: cipherVersion)
        }
        guard usesDBCryptProvider else { return try body() }
        dbcrypt_provider_select_mode(Int32(format == .sqlcipher4 ? DBCRYPT_MODE_SHA512 : DBCRYPT_MODE_SHA1))
        defer { dbcrypt_provider_select_mode(Int32(DBCRYPT_MODE_DEFAULT)) }
        return try body()
    }
}
