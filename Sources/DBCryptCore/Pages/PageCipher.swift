import CPrimitives

/// One file's page keys and layout: authenticates, decrypts and encrypts
/// its pages exactly as SQLCipher does (`sqlcipher_page_cipher`).
///
/// A page is `[content][IV 16][HMAC][padding]`: the content, from byte 0
/// (page 1: after the salt or the plaintext header) to `pageSize - reserve`,
/// is AES-256-CBC without padding under the IV; the HMAC covers the
/// encrypted content and the IV, then the page number in four bytes.
/// One thread at a time.
package final class PageCipher {
    package let layout: PageLayout
    /// The AES key, kept for a copy of the file with other settings (a new plaintext header).
    package let encryptionKey: SecretBytes
    private let cipher: OpaquePointer
    /// Nil for files with no HMAC (SQLCipher 1).
    private let hmac: OpaquePointer?

    /// Keys for a file with `salt`: `encryptionKey` (32 bytes) for AES, and
    /// the HMAC key derived from it as SQLCipher does (PBKDF2 with the salt
    /// XOR the mask, 2 iterations).
    ///
    /// - throws: ``DBCryptCore/CipherError/invalidSetting(name:reason:)`` when OpenSSL cannot make the keys.
    package init(encryptionKey: SecretBytes, salt: [UInt8], layout: PageLayout) throws {
        self.layout = layout
        self.encryptionKey = encryptionKey
        var hmacKey = [UInt8](repeating: 0, count: 32)
        defer { hmacKey.withUnsafeMutableBytes { dbcrypt_wipe($0.baseAddress, $0.count) } }
        let hmacSalt = salt.map { $0 ^ layout.hmacSaltMask }
        let cipher = encryptionKey.withUnsafeBytes { dbcrypt_cbc_key_new($0.baseAddress?.assumingMemoryBound(to: UInt8.self)) }
        let hmac: OpaquePointer? = encryptionKey.withUnsafeBytes { key in
            guard let hash = layout.hmacHash,
                  dbcrypt_pbkdf2(layout.kdfHash.cValue, key.baseAddress, key.count, hmacSalt, hmacSalt.count,
                                 UInt32(layout.hmacKDFIterations), &hmacKey, hmacKey.count) == 1 else { return nil }
            return dbcrypt_hmac_key_new(hash.cValue, hmacKey, hmacKey.count)
        }
        guard let cipher, hmac != nil || layout.hmacHash == nil else {
            dbcrypt_cbc_key_free(cipher)
            dbcrypt_hmac_key_free(hmac)
            throw CipherError.invalidSetting(name: "cipher", reason: "OpenSSL could not set up these keys")
        }
        self.cipher = cipher
        self.hmac = hmac
    }

    /// The page keys of a file with `salt`, opened with `key` under
    /// `settings`: the key derived once (a raw key with its own salt costs
    /// no derivation, and its salt wins).
    ///
    /// - throws: ``CipherError`` for settings out of range or keys OpenSSL cannot make.
    package convenience init(key: DatabaseKey, salt: [UInt8], settings: CipherSettings) throws {
        try settings.validate()
        let layout = PageLayout(settings)
        let salt = key.salt ?? salt
        try self.init(encryptionKey: key.encryptionKey(salt: salt, hash: layout.kdfHash, iterations: layout.kdfIterations),
                      salt: salt, layout: layout)
    }

    deinit {
        dbcrypt_cbc_key_free(cipher)
        dbcrypt_hmac_key_free(hmac)
    }

    /// Where page `number`'s encrypted content begins.
    package func contentStart(_ number: UInt32) -> Int { number == 1 ? layout.firstPageOffset : 0 }

    /// Whether a page carries an HMAC at all (not in SQLCipher 1 files).
    package var authenticates: Bool { layout.hmacHash != nil }

    /// Whether `page` (one whole page) is page `number` as written with these
    /// keys. Always false for files with no HMAC.
    package func authenticates(_ page: UnsafeRawBufferPointer, number: UInt32) -> Bool {
        guard let hash = layout.hmacHash, let hmac, page.count == layout.pageSize else { return false }
        let start = contentStart(number), ivEnd = layout.contentEnd + 16
        var mac = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        return withUnsafeMutableBytes(of: &mac) { mac in
            var pgno = pageNumberBytes(number)
            dbcrypt_hmac(hmac, page.baseAddress! + start, ivEnd - start, &pgno, 4, mac.baseAddress)
            return dbcrypt_equal(mac.baseAddress, page.baseAddress! + ivEnd, hash.digestSize) == 1
        }
    }

    /// The first `limit` pages of the file `reader` reads that do not
    /// authenticate with these keys (the lock-byte page, which SQLite never
    /// writes, aside; a last page the file ends inside counts), read 1 MiB
    /// at a time. Empty for files with no HMAC.
    ///
    /// - throws: ``FileError`` when the file cannot be read.
    package func unauthenticatedPages(of reader: FileReader, limit: Int = 10) throws(FileError) -> [UInt32] {
        guard authenticates else { return [] }
        let pageSize = layout.pageSize
        let windowPages = max(1, (1 << 20) / pageSize)
        let window = UnsafeMutableRawBufferPointer.allocate(byteCount: windowPages * pageSize, alignment: 16)
        defer { window.deallocate() }
        var failing: [UInt32] = []
        var first = 1
        while Int64(first - 1) * Int64(pageSize) < reader.size && failing.count < limit {
            let got = try reader.read(into: window, at: Int64(first - 1) * Int64(pageSize))
            guard got > 0 else { break }
            for index in 0..<(got + pageSize - 1) / pageSize where first + index != layout.lockBytePage {
                let page = UnsafeRawBufferPointer(rebasing: window[index * pageSize..<min((index + 1) * pageSize, got)])
                if !authenticates(page, number: UInt32(first + index)) { failing.append(UInt32(first + index)) }
            }
            first += windowPages
        }
        return Array(failing.prefix(limit))
    }

    /// Decrypts page `number` into `out` (a page's size): the content in place,
    /// the reserve zeroed; bytes before the content (page 1's salt or header)
    /// are left for the caller. Does not authenticate. False if OpenSSL failed.
    package func decrypt(_ page: UnsafeRawBufferPointer, number: UInt32, into out: UnsafeMutableRawBufferPointer) -> Bool {
        let start = contentStart(number), end = layout.contentEnd
        guard page.count == layout.pageSize, out.count == layout.pageSize else { return false }
        guard dbcrypt_cbc(cipher, 0, page.baseAddress! + end, page.baseAddress! + start, out.baseAddress! + start, end - start) == 1 else {
            return false
        }
        (out.baseAddress! + end).initializeMemory(as: UInt8.self, repeating: 0, count: layout.reserveSize)
        return true
    }

    /// Encrypts the plaintext page `number` into `out` under a fresh random
    /// IV, with its HMAC and random padding, as SQLCipher writes it; bytes
    /// before the content are left for the caller. False if OpenSSL failed.
    package func encrypt(_ plain: UnsafeRawBufferPointer, number: UInt32, into out: UnsafeMutableRawBufferPointer) -> Bool {
        let start = contentStart(number), end = layout.contentEnd
        guard plain.count == layout.pageSize, out.count == layout.pageSize else { return false }
        var generator = SystemRandomNumberGenerator()
        for index in end..<layout.pageSize { out[index] = generator.next() }
        guard dbcrypt_cbc(cipher, 1, out.baseAddress! + end, plain.baseAddress! + start, out.baseAddress! + start, end - start) == 1 else {
            return false
        }
        guard let hmac else { return true }
        var pgno = pageNumberBytes(number)
        dbcrypt_hmac(hmac, out.baseAddress! + start, end + 16 - start, &pgno, 4, out.baseAddress! + end + 16)
        return true
    }

    private func pageNumberBytes(_ number: UInt32) -> (UInt8, UInt8, UInt8, UInt8) {
        let value: UInt32 = switch layout.hmacPageNumber {
        case .littleEndian: number.littleEndian
        case .bigEndian: number.bigEndian
        case .native: number
        }
        return withUnsafeBytes(of: value) { ($0[0], $0[1], $0[2], $0[3]) }
    }
}
