import CPrimitives

/// A hash function SQLCipher uses for its key derivation (PBKDF2) and its page HMACs.
public enum CipherHash: String, Sendable, Hashable, CaseIterable {
    /// SHA-1: SQLCipher 1 to 3.
    case sha1 = "SHA1"
    /// SHA-256: a custom setting only.
    case sha256 = "SHA256"
    /// SHA-512: SQLCipher 4.
    case sha512 = "SHA512"

    /// The digest's length in bytes.
    public var digestSize: Int { Int(dbcrypt_hash_size(cValue)) }

    /// The hash as CPrimitives names it.
    package var cValue: Int32 {
        switch self {
        case .sha1: Int32(DBCRYPT_SHA1.rawValue)
        case .sha256: Int32(DBCRYPT_SHA256.rawValue)
        case .sha512: Int32(DBCRYPT_SHA512.rawValue)
        }
    }
}

/// How a page's number enters its HMAC (SQLCipher's `cipher_hmac_pgno`).
public enum PageNumberEncoding: String, Sendable, Hashable {
    /// Four bytes, least significant first: every SQLCipher's default.
    case littleEndian = "le"
    /// Four bytes, most significant first.
    case bigEndian = "be"
    /// The byte order of the machine that wrote the file (this machine's).
    case native
}
