import DBCryptCore

/// The settings a SQLCipher file was written with: everything besides the
/// key that reading it takes.
///
/// The four standard sets are ``sqlcipher4`` (the default of every SQLCipher
/// since 4.0), ``sqlcipher3``, ``sqlcipher2`` and ``sqlcipher1``; SQLCipher's
/// `cipher_compatibility` pragma selects them, and SQLite3 Multiple Ciphers
/// calls them `legacy=1...4`. Any field can differ in a custom file.
public struct CipherParameters: Sendable, Hashable, CustomStringConvertible {
    /// Bytes per page: a power of two from 512 to 65,536.
    public var pageSize: Int
    /// PBKDF2 iterations that turn a passphrase into the encryption key.
    public var kdfIterations: Int
    /// The hash of that PBKDF2 (and of the HMAC key's).
    public var kdfHash: CipherHash
    /// The hash of every page's HMAC, or nil for files with no HMAC (SQLCipher 1).
    public var hmacHash: CipherHash?
    /// Bytes at the start of page 1 kept in the clear (`cipher_plaintext_header_size`):
    /// 0 for a standard file, whose first 16 bytes are its salt; else a multiple
    /// of 16 (iOS apps use 32), and the salt is not in the file.
    public var plaintextHeaderSize: Int
    /// How the page number enters the HMAC.
    public var hmacPageNumber: PageNumberEncoding
    /// The byte the salt is XORed with to derive the HMAC key (0x3a).
    public var hmacSaltMask: UInt8
    /// PBKDF2 iterations from the encryption key to the HMAC key (2).
    public var hmacKDFIterations: Int

    /// Settings from their parts; the defaults are SQLCipher 4's.
    public init(pageSize: Int = 4096, kdfIterations: Int = 256_000, kdfHash: CipherHash = .sha512,
                hmacHash: CipherHash? = .sha512, plaintextHeaderSize: Int = 0,
                hmacPageNumber: PageNumberEncoding = .littleEndian, hmacSaltMask: UInt8 = 0x3a,
                hmacKDFIterations: Int = 2) {
        self.pageSize = pageSize
        self.kdfIterations = kdfIterations
        self.kdfHash = kdfHash
        self.hmacHash = hmacHash
        self.plaintextHeaderSize = plaintextHeaderSize
        self.hmacPageNumber = hmacPageNumber
        self.hmacSaltMask = hmacSaltMask
        self.hmacKDFIterations = hmacKDFIterations
    }

    /// SQLCipher 4's defaults: 4 KiB pages, PBKDF2-HMAC-SHA512 with 256,000
    /// iterations, HMAC-SHA512.
    public static let sqlcipher4 = CipherParameters()
    /// SQLCipher 3's: 1 KiB pages, PBKDF2-HMAC-SHA1 with 64,000 iterations, HMAC-SHA1.
    public static let sqlcipher3 = CipherParameters(pageSize: 1024, kdfIterations: 64_000, kdfHash: .sha1, hmacHash: .sha1)
    /// SQLCipher 2's: as 3 with 4,000 iterations.
    public static let sqlcipher2 = CipherParameters(pageSize: 1024, kdfIterations: 4000, kdfHash: .sha1, hmacHash: .sha1)
    /// SQLCipher 1's: as 2 with no page HMAC.
    public static let sqlcipher1 = CipherParameters(pageSize: 1024, kdfIterations: 4000, kdfHash: .sha1, hmacHash: nil)
    /// The standard sets, newest first: the order in which a file of unknown settings is tried.
    public static let standard: [CipherParameters] = [.sqlcipher4, .sqlcipher3, .sqlcipher2, .sqlcipher1]

    /// The page sizes SQLite allows.
    public static let pageSizes = SQLiteHeader.pageSizes

    /// Bytes at the end of every page that hold its IV and HMAC: their sizes
    /// rounded up to a multiple of the AES block (80 for SQLCipher 4, 48 for 2 and 3, 16 for 1).
    public var reserveSize: Int { (16 + (hmacHash?.digestSize ?? 0) + 15) / 16 * 16 }

    /// The SQLCipher version (1 to 4) whose standard set these are, with any
    /// page size and plaintext header; nil for custom settings.
    public var standardVersion: Int? {
        for (index, standard) in Self.standard.enumerated() {
            var same = self
            same.pageSize = standard.pageSize
            same.plaintextHeaderSize = 0
            if same == standard { return Self.standard.count - index }
        }
        return nil
    }

    /// One line: the standard set's name, or every setting; then whatever
    /// differs from it.
    public var description: String {
        var parts: [String] = []
        if let standardVersion {
            parts.append("SQLCipher \(standardVersion)")
            if pageSize != Self.standard[Self.standard.count - standardVersion].pageSize { parts.append("page size \(pageSize)") }
        } else {
            parts.append("page size \(pageSize)")
            parts.append("PBKDF2-HMAC-\(kdfHash.rawValue) \(kdfIterations) iterations")
            parts.append(hmacHash.map { "HMAC-\($0.rawValue)" } ?? "no HMAC")
            if hmacPageNumber != .littleEndian { parts.append("page number \(hmacPageNumber.rawValue)") }
            if hmacSaltMask != 0x3a { parts.append("HMAC salt mask \(hmacSaltMask)") }
            if hmacKDFIterations != 2 { parts.append("HMAC key iterations \(hmacKDFIterations)") }
        }
        if plaintextHeaderSize > 0 { parts.append("\(plaintextHeaderSize)-byte plaintext header") }
        return parts.joined(separator: ", ")
    }

    /// Where page 1's encrypted bytes begin: after the salt or the plaintext header.
    var firstPageOffset: Int { plaintextHeaderSize > 0 ? plaintextHeaderSize : 16 }

    /// The page that holds SQLite's lock bytes (the 512 bytes at 1 GiB):
    /// SQLite never writes it, so SQLCipher never encrypts it, and a file
    /// past 1 GiB holds whatever the file system left there.
    var lockBytePage: Int { 0x4000_0000 / pageSize + 1 }

    /// Where every page's encrypted bytes end and its IV begins.
    var contentEnd: Int { pageSize - reserveSize }

    /// Refuses settings no SQLCipher writes.
    ///
    /// - throws: ``CipherError/invalidSetting(name:reason:)`` naming the setting.
    public func validate() throws {
        guard Self.pageSizes.contains(pageSize) else {
            throw CipherError.invalidSetting(name: "cipher_page_size", reason: "the page size must be a power of two from 512 to 65536, not \(pageSize)")
        }
        guard (1...Int(Int32.max)).contains(kdfIterations), (1...Int(Int32.max)).contains(hmacKDFIterations) else {
            throw CipherError.invalidSetting(name: "kdf_iter", reason: "PBKDF2 iterations must be from 1 to \(Int32.max)")
        }
        guard plaintextHeaderSize >= 0, plaintextHeaderSize % 16 == 0, plaintextHeaderSize <= 96 else {
            throw CipherError.invalidSetting(
                name: "cipher_plaintext_header_size", reason: "the plaintext header size must be a multiple of 16 from 0 to 96, not \(plaintextHeaderSize)")
        }
        guard hmacHash != nil || plaintextHeaderSize <= 64 else {
            throw CipherError.invalidSetting(
                name: "cipher_plaintext_header_size", reason: "without an HMAC, a plaintext header of \(plaintextHeaderSize) bytes leaves nothing that tells a wrong key: at most 64")
        }
    }
}
