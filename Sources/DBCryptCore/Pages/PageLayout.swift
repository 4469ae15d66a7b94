/// ``CipherSettings`` resolved for reading pages: every value in effect,
/// none optional, and the layout of a page that follows from them.
package struct PageLayout: Hashable {
    /// Bytes per page: a power of two from 512 to 65,536.
    package var pageSize: Int
    /// PBKDF2 iterations that turn a passphrase into the encryption key.
    package var kdfIterations: Int
    /// The hash of that PBKDF2 (and of the HMAC key's).
    package var kdfHash: CipherHash
    /// The hash of every page's HMAC, or nil for files with no HMAC (SQLCipher 1).
    package var hmacHash: CipherHash?
    /// Bytes at the start of page 1 kept in the clear: 0 for a standard
    /// file, whose first 16 bytes are its salt.
    package var plaintextHeaderSize: Int
    /// How the page number enters the HMAC.
    package var hmacPageNumber: PageNumberEncoding
    /// The byte the salt is XORed with to derive the HMAC key.
    package var hmacSaltMask: UInt8
    /// PBKDF2 iterations from the encryption key to the HMAC key.
    package var hmacKDFIterations: Int

    /// The values `settings` put in effect.
    package init(_ settings: CipherSettings) {
        pageSize = settings.effectivePageSize
        kdfIterations = settings.effectiveKDFIterations
        kdfHash = settings.effectiveKDFHash
        hmacHash = settings.effectiveHMACHash
        plaintextHeaderSize = settings.plaintextHeaderSize
        hmacPageNumber = settings.hmacPageNumber
        hmacSaltMask = settings.hmacSaltMask
        hmacKDFIterations = settings.hmacKDFIterations
    }

    /// The settings, as the public API states them: the standard format
    /// whose hash the key derivation uses, and whatever differs from it.
    package var settings: CipherSettings {
        let format: CipherSettings.Format = kdfHash == .sha1 ? .sqlcipher3 : .sqlcipher4
        let formatHash: CipherHash = format == .sqlcipher4 ? .sha512 : .sha1
        var settings = CipherSettings(
            format, pageSize: pageSize == format.defaultPageSize ? nil : pageSize,
            kdfIterations: kdfIterations == format.defaultKDFIterations ? nil : kdfIterations,
            plaintextHeaderSize: plaintextHeaderSize, kdfHash: kdfHash == formatHash ? nil : kdfHash,
            hmacHash: hmacHash == nil || hmacHash == formatHash ? nil : hmacHash, usesHMAC: hmacHash != nil)
        settings.hmacPageNumber = hmacPageNumber
        settings.hmacSaltMask = hmacSaltMask
        settings.hmacKDFIterations = hmacKDFIterations
        return settings
    }

    /// Bytes at the end of every page that hold its IV and HMAC: their sizes
    /// rounded up to a multiple of the AES block (80 for SQLCipher 4, 48 for 2 and 3, 16 for 1).
    package var reserveSize: Int { (16 + (hmacHash?.digestSize ?? 0) + 15) / 16 * 16 }

    /// Where page 1's encrypted bytes begin: after the salt or the plaintext header.
    package var firstPageOffset: Int { plaintextHeaderSize > 0 ? plaintextHeaderSize : 16 }

    /// The page that holds SQLite's lock bytes (the 512 bytes at 1 GiB):
    /// SQLite never writes it, so SQLCipher never encrypts it, and a file
    /// past 1 GiB holds whatever the file system left there.
    package var lockBytePage: Int { 0x4000_0000 / pageSize + 1 }

    /// Where every page's encrypted bytes end and its IV begins.
    package var contentEnd: Int { pageSize - reserveSize }
}
