/// The cipher settings a database is created or opened with.
///
/// A setting left `nil` is the linked SQLCipher's own default (on Debian's
/// SQLCipher 3.4.1: 1024-byte pages and 64,000 PBKDF2 iterations). The same
/// settings must be given again to open the file later.
///
/// ```swift
/// var options = Database.Options()
/// options.cipher = CipherSettings(pageSize: 4096, kdfIterations: 256_000)
/// ```
public struct CipherSettings: Sendable, Equatable {
    /// The page size in bytes (`PRAGMA cipher_page_size`): a power of two
    /// from 512 to 65536.
    public var pageSize: Int?
    /// The number of PBKDF2 iterations that turn a passphrase into a key
    /// (`PRAGMA kdf_iter`). Ignored for raw keys, which skip derivation.
    public var kdfIterations: Int?

    /// Settings with the given values; `nil` leaves the library's default.
    public init(pageSize: Int? = nil, kdfIterations: Int? = nil) {
        self.pageSize = pageSize
        self.kdfIterations = kdfIterations
    }

    /// The linked SQLCipher's own defaults.
    public static let libraryDefaults = CipherSettings()

    /// The pragmas that apply these settings, in order, after the key, to the
    /// database `schema` (`main` when nil). Values are validated integers, so
    /// the SQL never carries caller text.
    func pragmas(schema: String? = nil) throws -> [(setting: CipherSetting, sql: String)] {
        let prefix = schema.map { "PRAGMA \($0)." } ?? "PRAGMA "
        var result: [(CipherSetting, String)] = []
        if let pageSize {
            guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else {
                throw DatabaseError.invalidCipherSetting(
                    name: CipherSetting.pageSize.rawValue, reason: "the page size must be a power of two from 512 to 65536")
            }
            result.append((.pageSize, prefix + "cipher_page_size = \(pageSize)"))
        }
        if let kdfIterations {
            guard kdfIterations >= 1 else {
                throw DatabaseError.invalidCipherSetting(
                    name: CipherSetting.kdfIterations.rawValue, reason: "the KDF iteration count must be at least 1")
            }
            result.append((.kdfIterations, prefix + "kdf_iter = \(kdfIterations)"))
        }
        return result
    }
}

/// A cipher setting, named by the pragma that sets it.
public enum CipherSetting: String, Sendable, CaseIterable {
    /// `cipher_page_size`.
    case pageSize = "cipher_page_size"
    /// `kdf_iter`.
    case kdfIterations = "kdf_iter"
    /// `cipher_use_hmac`: per-page HMAC on or off.
    case useHMAC = "cipher_use_hmac"
    /// `cipher_hmac_algorithm` (SQLCipher 4 and later).
    case hmacAlgorithm = "cipher_hmac_algorithm"
    /// `cipher_kdf_algorithm` (SQLCipher 4 and later).
    case kdfAlgorithm = "cipher_kdf_algorithm"
    /// `cipher_plaintext_header_size` (SQLCipher 4 and later, or 3.4.2 and later).
    case plaintextHeaderSize = "cipher_plaintext_header_size"
    /// `cipher_compatibility` (SQLCipher 4 and later).
    case compatibility = "cipher_compatibility"
}
