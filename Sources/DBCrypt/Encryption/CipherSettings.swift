import SQLCipherFormat

/// The cipher settings a database is created or opened with: a format and,
/// optionally, a page size and a KDF iteration count that differ from the
/// format's.
///
/// New databases default to ``sqlcipher4``, the format of every SQLCipher
/// since 4.0 (iOS and Android apps write it). Opening an existing file tries
/// the settings given, then the other standard format, so files of either
/// version open with just the key.
///
/// ```swift
/// var options = Database.Options()
/// options.cipher = .sqlcipher3                      // for peers that only know SQLCipher 3
/// options.cipher = CipherSettings(.sqlcipher4, pageSize: 8192)
/// ```
public struct CipherSettings: Sendable, Equatable, CustomStringConvertible {
    /// A standard SQLCipher file format: its hash for key derivation and
    /// page HMACs, and its default page size and iteration count.
    public enum Format: String, Sendable, Equatable, CaseIterable {
        /// SQLCipher 3: PBKDF2-HMAC-SHA1 with 64,000 iterations, HMAC-SHA1,
        /// 1024-byte pages, 48 reserved bytes per page.
        case sqlcipher3
        /// SQLCipher 4: PBKDF2-HMAC-SHA512 with 256,000 iterations,
        /// HMAC-SHA512, 4096-byte pages, 80 reserved bytes per page.
        case sqlcipher4

        /// The format's page size in bytes.
        public var defaultPageSize: Int { self == .sqlcipher4 ? 4096 : 1024 }
        /// The format's PBKDF2 iteration count.
        public var defaultKDFIterations: Int { self == .sqlcipher4 ? 256_000 : 64_000 }
        /// The other standard format.
        var other: Format { self == .sqlcipher4 ? .sqlcipher3 : .sqlcipher4 }
    }

    /// The file format.
    public var format: Format
    /// The page size in bytes (a power of two from 512 to 65536); nil is the format's.
    public var pageSize: Int?
    /// The PBKDF2 iterations that turn a passphrase into a key; nil is the
    /// format's. Raw keys skip this derivation.
    public var kdfIterations: Int?
    /// How many bytes at the start of the file stay in the clear (0: none,
    /// the standard layout). iOS apps whose database lives in a shared
    /// container use 32, so that the system recognises a SQLite file
    /// (`cipher_plaintext_header_size`; SQLCipher 4 and later). Such a file
    /// does not hold its salt: give it in the raw key or in ``salt``.
    public var plaintextHeaderSize: Int
    /// The file's 16-byte salt, for a file with a plaintext header opened or
    /// created with a passphrase (`cipher_salt`). Nil otherwise: a raw key
    /// with its salt carries it, and a standard file holds its own.
    public var salt: [UInt8]?
    /// The hash of the key derivation (PBKDF2-HMAC), if not the format's
    /// (`cipher_kdf_algorithm`; SQLCipher 4.x).
    public var kdfHash: CipherHash?
    /// The hash of each page's HMAC, if not the format's
    /// (`cipher_hmac_algorithm`; SQLCipher 4.x).
    public var hmacHash: CipherHash?
    /// Whether each page carries an HMAC (`cipher_use_hmac`); files written
    /// with SQLCipher 1's settings do not (SQLCipher 4.x).
    public var usesHMAC: Bool

    /// Settings of `format`, with the page size, iterations and hashes given
    /// or the format's, and a plaintext header of `plaintextHeaderSize`
    /// bytes with its `salt`, if any.
    public init(_ format: Format, pageSize: Int? = nil, kdfIterations: Int? = nil, plaintextHeaderSize: Int = 0, salt: [UInt8]? = nil,
                kdfHash: CipherHash? = nil, hmacHash: CipherHash? = nil, usesHMAC: Bool = true) {
        self.format = format
        self.pageSize = pageSize
        self.kdfIterations = kdfIterations
        self.plaintextHeaderSize = plaintextHeaderSize
        self.salt = salt
        self.kdfHash = kdfHash
        self.hmacHash = hmacHash
        self.usesHMAC = usesHMAC
    }

    /// The format's hash, for the key derivation and the page HMAC.
    var formatHash: CipherHash { format == .sqlcipher4 ? .sha512 : .sha1 }
    /// Whether any hash or the HMAC differs from the format's.
    var hasCustomHashes: Bool { (kdfHash ?? formatHash) != formatHash || (hmacHash ?? formatHash) != formatHash || !usesHMAC }

    /// SQLCipher 4's defaults: the default for new databases.
    public static let sqlcipher4 = CipherSettings(.sqlcipher4)
    /// SQLCipher 3's defaults (also what Debian's `sqlcipher` shell writes).
    public static let sqlcipher3 = CipherSettings(.sqlcipher3)

    /// The page size in effect.
    public var effectivePageSize: Int { pageSize ?? format.defaultPageSize }
    /// The iteration count in effect.
    public var effectiveKDFIterations: Int { kdfIterations ?? format.defaultKDFIterations }

    /// The other standard format's defaults, tried when these do not open a
    /// file (the plaintext header and salt kept).
    var fallback: CipherSettings { CipherSettings(format.other, plaintextHeaderSize: plaintextHeaderSize, salt: salt) }

    /// For example `sqlcipher4 (4096-byte pages, 256000 KDF iterations)`,
    /// with `, 32-byte plaintext header` when there is one.
    public var description: String {
        let header = plaintextHeaderSize > 0 ? ", \(plaintextHeaderSize)-byte plaintext header" : ""
        let hashes = !hasCustomHashes ? ""
            : ", PBKDF2-HMAC-\((kdfHash ?? formatHash).rawValue), " + (usesHMAC ? "HMAC-\((hmacHash ?? formatHash).rawValue)" : "no HMAC")
        return "\(format.rawValue) (\(effectivePageSize)-byte pages, \(effectiveKDFIterations) KDF iterations\(hashes)\(header))"
    }

    /// Checks the values before they reach SQLCipher.
    ///
    /// - throws: ``CipherError/invalidSetting(name:reason:)``.
    func validate() throws {
        let pageSize = effectivePageSize
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else {
            throw CipherError.invalidSetting(
                name: CipherSetting.pageSize.rawValue, reason: "the page size must be a power of two from 512 to 65536")
        }
        guard effectiveKDFIterations >= 1, effectiveKDFIterations <= Int(Int32.max) else {
            throw CipherError.invalidSetting(
                name: CipherSetting.kdfIterations.rawValue, reason: "the KDF iteration count must be from 1 to 2147483647")
        }
        // Up to 80: bytes 80-91 stay encrypted, which tells such a file
        // from a plaintext database (``FileFormat/detect(at:)``).
        guard plaintextHeaderSize >= 0, plaintextHeaderSize % 16 == 0, plaintextHeaderSize <= 80 else {
            throw CipherError.invalidSetting(
                name: CipherSetting.plaintextHeaderSize.rawValue, reason: "the plaintext header size must be a multiple of 16 from 0 to 80")
        }
        guard salt == nil || salt?.count == 16 else {
            throw CipherError.invalidSetting(name: "cipher_salt", reason: "the salt must be 16 bytes")
        }
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
    /// `cipher_plaintext_header_size` (SQLCipher 4 and later: DBCrypt
    /// uses it on engines whose own pragmas choose the format).
    case plaintextHeaderSize = "cipher_plaintext_header_size"
    /// `cipher_compatibility` (SQLCipher 4 and later).
    case compatibility = "cipher_compatibility"
}
