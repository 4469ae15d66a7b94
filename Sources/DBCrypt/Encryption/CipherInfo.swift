import CSQLCipher

/// What the linked SQLCipher is and what it can do.
///
/// ```swift
/// let info = try CipherInfo.linked()
/// print(info.cipherVersion, info.provider)      // "3.4.1 community" "openssl"
/// info.supports(.hmacAlgorithm)                 // false on Debian's 3.4.1
/// ```
///
/// SQLCipher 3.4.1 silently ignores pragmas it does not know, so support is
/// detected by whether the pragma returns a row on a keyed connection.
public struct CipherInfo: Sendable, Equatable {
    /// `PRAGMA cipher_version`, for example `3.4.1`.
    public let cipherVersion: String
    /// The SQLite version SQLCipher is built on (`sqlite_version()`).
    public let sqliteVersion: String
    /// The crypto provider's name (`PRAGMA cipher_provider`), for example `openssl`.
    public let provider: String
    /// The crypto provider's version, when the library reports it.
    public let providerVersion: String?
    /// The cipher settings whose pragmas the linked library answers.
    public let supportedSettings: Set<CipherSetting>

    /// Whether the linked library supports `setting`.
    public func supports(_ setting: CipherSetting) -> Bool { supportedSettings.contains(setting) }

    /// The linked library's information, probed once per process on an
    /// in-memory connection.
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
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(":memory:", &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
        guard code == SQLITE_OK, let handle else {
            if let handle { sqlite3_close_v2(handle) }
            throw DatabaseError.cannotOpen(path: ":memory:", reason: String(cString: sqlite3_errstr(code)))
        }
        let connection = Connection(handle: handle)
        defer { connection.close() }
        let sqliteVersion = String(cString: sqlite3_libversion())
        guard case let .text(version)? = try connection.firstValue("PRAGMA cipher_version") else {
            throw DatabaseError.notSQLCipher(sqliteVersion: sqliteVersion)
        }
        // Cipher pragmas answer only once a codec is attached, that is, after a key.
        try connection.applyKey(.passphrase("probe"))
        var supported: Set<CipherSetting> = []
        for setting in CipherSetting.allCases where try connection.firstValue("PRAGMA \(setting.rawValue)") != nil {
            supported.insert(setting)
        }
        func text(_ sql: String) throws -> String? {
            switch try connection.firstValue(sql) {
            case let .text(t)?: return t
            case let .integer(i)?: return String(i)
            default: return nil
            }
        }
        return CipherInfo(
            cipherVersion: version,
            sqliteVersion: try text("SELECT sqlite_version()") ?? sqliteVersion,
            provider: try text("PRAGMA cipher_provider") ?? "unknown",
            providerVersion: try text("PRAGMA cipher_provider_version"),
            supportedSettings: supported)
    }
}
