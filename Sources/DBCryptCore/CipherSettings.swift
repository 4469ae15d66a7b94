/// The settings a SQLCipher file is written with: everything besides the
/// key that reading it takes. DBCrypt creates and opens databases with
/// them; SQLCipherFormat's page reader reads files with them, and finds
/// them when it is not given any.
///
/// A format (its hashes, page size and iteration count) and, optionally,
/// what differs from it. New databases default to ``sqlcipher4``, the format
/// of every SQLCipher since 4.0 (iOS and Android apps write it). Opening an
/// existing file tries the settings given, then the other standard format,
/// so files of either version open with just the key. ``sqlcipher2`` and
/// ``sqlcipher1`` are SQLCipher 3's format with its older iteration count,
/// and without page HMACs.
///
/// ```swift
/// var options = Database.Options()
/// options.cipher = .sqlcipher3                      // for peers that only know SQLCipher 3
/// options.cipher = CipherSettings(.sqlcipher4, pageSize: 8192)
/// ```
///
/// `==` compares the settings as written: `CipherSettings(.sqlcipher4,
/// pageSize: 4096)` is not `.sqlcipher4`, although both read the same
/// files; compare `effectivePageSize` and the other `effective` values for that.
public struct CipherSettings: Sendable, Hashable, CustomStringConvertible {
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
        package var other: Format { self == .sqlcipher4 ? .sqlcipher3 : .sqlcipher4 }
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
    /// How a page's number enters its HMAC (`cipher_hmac_pgno`): little-endian
    /// in every SQLCipher's default.
    public var hmacPageNumber: PageNumberEncoding = .littleEndian
    /// The byte the salt is XORed with to derive the HMAC key
    /// (`cipher_hmac_salt_mask`, 0x3a).
    public var hmacSaltMask: UInt8 = 0x3a
    /// PBKDF2 iterations from the encryption key to the HMAC key
    /// (`fast_kdf_iter`, 2).
    public var hmacKDFIterations: Int = 2

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
    package var formatHash: CipherHash { format == .sqlcipher4 ? .sha512 : .sha1 }
    /// Whether any hash or the HMAC differs from the format's.
    package var hasCustomHashes: Bool {
        (kdfHash ?? formatHash) != formatHash || (hmacHash ?? formatHash) != formatHash || !usesHMAC
    }
    /// Whether the HMAC key is derived and each page's number is fed as
    /// every SQLCipher does by default.
    package var hasStandardHMACDetails: Bool { hmacPageNumber == .littleEndian && hmacSaltMask == 0x3a && hmacKDFIterations == 2 }

    /// SQLCipher 4's defaults: the default for new databases.
    public static let sqlcipher4 = CipherSettings(.sqlcipher4)
    /// SQLCipher 3's defaults (also what Debian's `sqlcipher` shell writes).
    public static let sqlcipher3 = CipherSettings(.sqlcipher3)
    /// SQLCipher 2's: as 3 with 4,000 iterations.
    public static let sqlcipher2 = CipherSettings(.sqlcipher3, kdfIterations: 4000)
    /// SQLCipher 1's: as 2 with no page HMAC.
    public static let sqlcipher1 = CipherSettings(.sqlcipher3, kdfIterations: 4000, usesHMAC: false)
    /// The standard sets, newest first: the order in which a file of unknown
    /// settings is tried.
    public static let standard: [CipherSettings] = [.sqlcipher4, .sqlcipher3, .sqlcipher2, .sqlcipher1]
    /// The page sizes SQLite allows.
    public static let pageSizes = SQLiteHeader.pageSizes
    /// The plaintext header sizes a file that keeps its first bytes in the
    /// clear is tried with when none is given: iOS's 32 first, then every
    /// other multiple of 16 up to 96.
    package static let plaintextHeaderSizes = [32, 16, 48, 64, 80, 96]

    /// The hash of the key derivation in effect.
    public var effectiveKDFHash: CipherHash { kdfHash ?? formatHash }
    /// The hash of each page's HMAC in effect; nil without one.
    public var effectiveHMACHash: CipherHash? { usesHMAC ? hmacHash ?? formatHash : nil }

    /// The SQLCipher version (1 to 4) whose standard set these are, with any
    /// page size, plaintext header and salt; nil for other settings.
    public var standardVersion: Int? {
        Self.standard.firstIndex { $0.sameAsIgnoringLayout(self) }.map { Self.standard.count - $0 }
    }

    /// Whether `other` has the same effective hashes, iterations and HMAC
    /// details, whatever the page size, plaintext header and salt.
    private func sameAsIgnoringLayout(_ other: CipherSettings) -> Bool {
        effectiveKDFHash == other.effectiveKDFHash && effectiveHMACHash == other.effectiveHMACHash
            && effectiveKDFIterations == other.effectiveKDFIterations && hmacPageNumber == other.hmacPageNumber
            && hmacSaltMask == other.hmacSaltMask && hmacKDFIterations == other.hmacKDFIterations
    }

    /// The page size in effect.
    public var effectivePageSize: Int { pageSize ?? format.defaultPageSize }
    /// The iteration count in effect.
    public var effectiveKDFIterations: Int { kdfIterations ?? format.defaultKDFIterations }

    /// The other standard format's defaults, tried when these do not open a
    /// file (the plaintext header and salt kept).
    package var fallback: CipherSettings { CipherSettings(format.other, plaintextHeaderSize: plaintextHeaderSize, salt: salt) }

    /// One line: the standard set's name, or every setting; then whatever
    /// differs from it. For example `SQLCipher 4`, `SQLCipher 3, page size
    /// 4096`, `SQLCipher 4, 32-byte plaintext header`, or `page size 4096,
    /// PBKDF2-HMAC-SHA256 10000 iterations, HMAC-SHA256`.
    public var description: String {
        var parts: [String] = []
        if let standardVersion {
            parts.append("SQLCipher \(standardVersion)")
            if effectivePageSize != Self.standard[Self.standard.count - standardVersion].effectivePageSize {
                parts.append("page size \(effectivePageSize)")
            }
        } else {
            parts.append("page size \(effectivePageSize)")
            parts.append("PBKDF2-HMAC-\(effectiveKDFHash.rawValue) \(effectiveKDFIterations) iterations")
            parts.append(effectiveHMACHash.map { "HMAC-\($0.rawValue)" } ?? "no HMAC")
            if hmacPageNumber != .littleEndian { parts.append("page number \(hmacPageNumber.rawValue)") }
            if hmacSaltMask != 0x3a { parts.append("HMAC salt mask \(hmacSaltMask)") }
            if hmacKDFIterations != 2 { parts.append("HMAC key iterations \(hmacKDFIterations)") }
        }
        if plaintextHeaderSize > 0 { parts.append("\(plaintextHeaderSize)-byte plaintext header") }
        return parts.joined(separator: ", ")
    }

    /// Checks the values before any file is read or written: refuses what
    /// no SQLCipher writes.
    ///
    /// - throws: ``CipherError/invalidSetting(name:reason:)`` naming the setting's pragma.
    public func validate() throws {
        let pageSize = effectivePageSize
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else {
            throw CipherError.invalidSetting(
                name: CipherPragma.pageSize.rawValue, reason: "the page size must be a power of two from 512 to 65536")
        }
        guard effectiveKDFIterations >= 1, effectiveKDFIterations <= Int(Int32.max) else {
            throw CipherError.invalidSetting(
                name: CipherPragma.kdfIterations.rawValue, reason: "the KDF iteration count must be from 1 to 2147483647")
        }
        guard (1...Int(Int32.max)).contains(hmacKDFIterations) else {
            throw CipherError.invalidSetting(name: "fast_kdf_iter", reason: "the HMAC key's iteration count must be from 1 to 2147483647")
        }
        // Up to 96, SQLCipher's limit. DBCrypt writes up to 80, so that
        // bytes 80-91 stay encrypted and tell such a file from a plaintext
        // database; it reads larger ones with the page reader.
        guard plaintextHeaderSize >= 0, plaintextHeaderSize % 16 == 0, plaintextHeaderSize <= 96 else {
            throw CipherError.invalidSetting(
                name: CipherPragma.plaintextHeaderSize.rawValue, reason: "the plaintext header size must be a multiple of 16 from 0 to 96")
        }
        guard usesHMAC || plaintextHeaderSize <= 64 else {
            throw CipherError.invalidSetting(
                name: CipherPragma.plaintextHeaderSize.rawValue,
                reason: "without an HMAC, a plaintext header of \(plaintextHeaderSize) bytes leaves nothing that tells a wrong key: at most 64")
        }
        guard salt == nil || salt?.count == 16 else {
            throw CipherError.invalidSetting(name: "cipher_salt", reason: "the salt must be 16 bytes")
        }
    }
}

/// A cipher setting, named by the pragma that sets it.
public enum CipherPragma: String, Sendable, CaseIterable {
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

/// The first name of ``CipherPragma`` (one letter away from CipherSettings).
@available(*, deprecated, renamed: "CipherPragma")
public typealias CipherSetting = CipherPragma
