import DBCryptCore

/// A SQLCipher database file opened with its key, read without SQLCipher:
/// its settings found (or given), its page keys derived once.
///
/// ```swift
/// let file = try EncryptedDatabaseFile(path: "app.db", key: .passphrase("secret"))
/// let report = try file.verify()
/// print(report.damage.isEmpty ? "intact" : "\(report.damage.count) damaged pages")
/// ```
///
/// Opening tries the given settings, or else SQLCipher 4, 3, 2 and 1 with
/// every page size, on page 1's HMAC. When page 1 does not authenticate
/// under any of them but page 2 does, the key is right and page 1 is
/// damaged: the file opens, and ``firstPageAuthenticates`` is false.
/// One thread at a time.
public final class EncryptedDatabaseFile {
    /// The file's path.
    public let path: String
    /// The settings the file was written with.
    public var settings: CipherSettings { layout.settings }
    /// Those settings, resolved for reading pages.
    let layout: PageLayout
    /// The file's 16-byte salt (not a secret): its first 16 bytes, or the
    /// one given for a file with a plaintext header.
    public let salt: [UInt8]
    /// False when page 1 does not authenticate and page 2 vouched for the key instead.
    public let firstPageAuthenticates: Bool

    let reader: SourceFile
    let cipher: PageCipher

    /// Opens `path` with `key`.
    ///
    /// - parameters:
    ///   - settings: the file's settings; nil to try the standard ones.
    ///   - salt: the salt of a file with a plaintext header, unless `key` is
    ///     a raw key with its salt (or `settings` carries it).
    /// - throws: ``SQLCipherFormatError``: `fileNotFound`, `cannotRead`,
    ///   `tooShort`, `notEncrypted` (a plaintext SQLite file), `saltNeeded`
    ///   (a plaintext header and no salt), `wrongKey` (no setting authenticates),
    ///   or ``DBCryptCore/CipherError`` for settings out of range or a salt not 16 bytes.
    public init(path: String, key: DatabaseKey, settings: CipherSettings? = nil, salt: [UInt8]? = nil) throws {
        try settings?.validate()
        let layout = settings.map(PageLayout.init)
        let salt = salt ?? settings?.salt
        if let salt, salt.count != 16 { throw CipherError.invalidKey(reason: "a salt is 16 bytes, not \(salt.count)") }
        let reader = try SourceFile(path: path)
        guard reader.size >= 512 else { throw SQLCipherFormatError.tooShort(path: path, size: reader.size) }
        let start = try reader.read(2 * 65536, at: 0)
        let clearHeader = Array(start[0..<16]) == SQLiteHeader.magic
        if clearHeader && SQLiteHeader.isPlaintextDatabase(start) { throw SQLCipherFormatError.notEncrypted(path: path) }
        let saltOutside = clearHeader || (layout?.plaintextHeaderSize ?? 0) > 0
        guard let fileSalt = saltOutside ? key.salt ?? salt : key.salt ?? Array(start[0..<16]) else {
            throw SQLCipherFormatError.saltNeeded(path: path)
        }
        let candidates = Self.candidates(given: layout, clearHeader: clearHeader ? start : nil)
        var keys: [String: SecretBytes] = [:]  // encryption keys by KDF, each derived once
        var secondPageMatch: PageCipher?
        var decryptsButHMACsFail = false
        for candidate in candidates {
            let kdf = "\(candidate.kdfHash) \(candidate.kdfIterations)"
            let encryptionKey = try keys[kdf] ?? key.encryptionKey(salt: fileSalt, hash: candidate.kdfHash, iterations: candidate.kdfIterations)
            keys[kdf] = encryptionKey
            let cipher = try PageCipher(encryptionKey: encryptionKey, salt: fileSalt, layout: candidate)
            var matches = false
            switch Self.firstPage(start, cipher) {
            case .matches: matches = true
            case .decryptsWithLargerReserve(let reserve):
                // A raw key decrypts pages whatever the salt: this may be a file
                // with HMACs that this salt cannot verify.
                if try Self.hasHMACLayout(start, encryptionKey: encryptionKey, salt: fileSalt, candidate: candidate, reserve: reserve) {
                    decryptsButHMACsFail = true
                }
            case .differs: break
            }
            if matches {
                (self.path, self.reader, self.cipher, self.layout, self.salt) = (path, reader, cipher, candidate, fileSalt)
                firstPageAuthenticates = true
                return
            }
            if secondPageMatch == nil, cipher.authenticates, start.count >= 2 * candidate.pageSize,
               start[candidate.pageSize..<2 * candidate.pageSize].withUnsafeBytes({ cipher.authenticates($0, number: 2) }) {
                secondPageMatch = cipher
            }
        }
        guard let cipher = secondPageMatch else {
            // A raw key decrypts pages whatever the salt; the salt keys only
            // their HMACs. Pages that decrypt but whose HMACs fail: the salt.
            if decryptsButHMACsFail && key.kind != .passphrase { throw SQLCipherFormatError.wrongSalt(path: path) }
            let tried = settings.map { "\($0)" } ?? "SQLCipher 4, 3, 2 and 1 settings with every page size"
            throw SQLCipherFormatError.wrongKey(path: path, triedSettings: tried)
        }
        (self.path, self.reader, self.cipher, self.layout, self.salt) = (path, reader, cipher, cipher.layout, fileSalt)
        firstPageAuthenticates = false
    }

    /// Whether the file at `path` is a SQLCipher file with a plaintext
    /// header: its first bytes are SQLite's header in the clear, but what
    /// follows is not a plaintext database's. False when it cannot be read.
    public static func hasPlaintextHeader(at path: String) -> Bool {
        guard let reader = try? SourceFile(path: path), let start = try? reader.read(4096, at: 0) else { return false }
        return start.count >= 512 && Array(start[0..<16]) == SQLiteHeader.magic && !SQLiteHeader.hasPageOneLayout(start)
    }

    /// Pages in the file, the last one counted even when the file ends inside it.
    public var pageCount: Int { Int((reader.size + Int64(layout.pageSize) - 1) / Int64(layout.pageSize)) }

    /// The settings to try: the given ones, else the standard sets, each with
    /// its own page size first, then every other. A file whose first bytes
    /// are in the clear states its page size there, and is tried with every
    /// plaintext header size unless one is given.
    private static func candidates(given: PageLayout?, clearHeader: [UInt8]?) -> [PageLayout] {
        var candidates: [PageLayout] = []
        let statedSize = clearHeader.flatMap { SQLiteHeader($0)?.pageSize }
        for standard in given.map({ [$0] }) ?? CipherSettings.standard.map(PageLayout.init) {
            let sizes = given != nil ? [standard.pageSize]
                : statedSize.map { [$0] } ?? [standard.pageSize] + CipherSettings.pageSizes.filter { $0 != standard.pageSize }
            let headerSizes = clearHeader == nil || standard.plaintextHeaderSize > 0 ? [standard.plaintextHeaderSize] : CipherSettings.plaintextHeaderSizes
            for size in sizes {
                for headerSize in headerSizes {
                    var candidate = standard
                    candidate.pageSize = size
                    candidate.plaintextHeaderSize = headerSize
                    candidates.append(candidate)
                }
            }
        }
        return candidates
    }

    /// What page 1 says of a candidate's settings and key.
    private enum FirstPage {
        /// Page 1 is this key's under these settings.
        case matches
        /// With no HMAC (SQLCipher 1), the key decrypts page 1 but for its
        /// first block, and its header reserves `reserve` bytes, more than
        /// these settings use: the IV is elsewhere, as with an HMAC.
        case decryptsWithLargerReserve(Int)
        /// Not this key, or not these settings.
        case differs
    }

    /// Whether page 1 in `start` is this key's under `cipher`'s settings: its
    /// HMAC, or with no HMAC (SQLCipher 1), bytes that only the right key
    /// decrypts to what SQLite writes on page 1 (`SQLiteHeader.hasPageOneLayout`),
    /// besides a header with the page size of those settings and room for
    /// their reserve; and the first encrypted block,
    /// which only the IV where these settings keep it decrypts (SQLCipher 4
    /// in SQLCipher 1's compatibility reserves more than the IV). Bytes in
    /// the clear prove nothing: a plaintext header that covers bytes 72-91
    /// leaves no test that a wrong key would fail, so such settings never match.
    private static func firstPage(_ start: [UInt8], _ cipher: PageCipher) -> FirstPage {
        let size = cipher.layout.pageSize
        guard start.count >= size else { return .differs }
        return start[0..<size].withUnsafeBytes { page in
            if cipher.authenticates { return cipher.authenticates(page, number: 1) ? .matches : .differs }
            guard cipher.layout.plaintextHeaderSize <= 72, let plain = decryptedPage(page, cipher),
                  let header = SQLiteHeader(plain), header.pageSize == size, header.reserve >= cipher.layout.reserveSize,
                  SQLiteHeader.hasPageOneLayout(plain) else { return .differs }
            if firstBlockIsSQLites(plain, layout: cipher.layout) { return .matches }
            return header.reserve > cipher.layout.reserveSize ? .decryptsWithLargerReserve(Int(header.reserve)) : .differs
        }
    }

    /// Whether page 1 is laid out for an HMAC of `reserve` bytes' room: its
    /// IV read where that layout keeps it, the first encrypted block then
    /// decrypts to what SQLite writes there. CBC decrypts every later block
    /// whatever the IV, so only this block tells the two layouts apart.
    private static func hasHMACLayout(_ start: [UInt8], encryptionKey: SecretBytes, salt: [UInt8],
                                      candidate: PageLayout, reserve: Int) throws -> Bool {
        var layout = candidate
        layout.hmacHash = reserve == 80 ? .sha512 : .sha1
        guard layout.reserveSize == reserve else { return false }
        let cipher = try PageCipher(encryptionKey: encryptionKey, salt: salt, layout: layout)
        guard let plain = start[0..<layout.pageSize].withUnsafeBytes({ decryptedPage($0, cipher) }) else { return false }
        return firstBlockIsSQLites(plain, layout: layout)
    }

    /// Whether page 1's first encrypted block, decrypted in `plain`, holds
    /// what SQLite writes there: a wrong IV turns it to noise.
    private static func firstBlockIsSQLites(_ plain: [UInt8], layout: PageLayout) -> Bool {
        func zeros(_ range: Range<Int>) -> Bool { plain[range].allSatisfy { $0 == 0 } }
        switch layout.firstPageOffset {
        case 16: return SQLiteHeader(plain)?.pageSize == layout.pageSize && Array(plain[21..<24]) == [64, 32, 32]
        case 32: return zeros(44..<47) && (1...4).contains(plain[47])       // the schema format
        case 48: return zeros(56..<59) && (1...3).contains(plain[59])       // the text encoding
        case 64: return zeros(64..<67) && zeros(72..<80)                    // incremental vacuum 0 or 1, then reserved zeros
        default: return false
        }
    }

    /// Page 1 decrypted (not authenticated), its clear bytes as they are, or
    /// nil when OpenSSL failed.
    private static func decryptedPage(_ page: UnsafeRawBufferPointer, _ cipher: PageCipher) -> [UInt8]? {
        var plain = [UInt8](repeating: 0, count: page.count)
        let ok = plain.withUnsafeMutableBytes { cipher.decrypt(page, number: 1, into: $0) }
        plain.replaceSubrange(0..<cipher.layout.plaintextHeaderSize, with: page[0..<cipher.layout.plaintextHeaderSize])
        return ok ? plain : nil
    }

    /// Page 1's SQLite header, decrypted (not authenticated), or nil if it is not one.
    static func decryptedHeader(_ page: UnsafeRawBufferPointer, _ cipher: PageCipher) -> SQLiteHeader? {
        decryptedPage(page, cipher).flatMap { SQLiteHeader($0) }
    }
}

extension EncryptedDatabaseFile: PageReading {
    /// Whether `error` is ``SQLCipherFormatError/wrongKey(path:triedSettings:)``
    /// or ``SQLCipherFormatError/tooShort(path:size:)``: not a salt's fault.
    public static func isWrongKey(_ error: any Error) -> Bool {
        switch error {
        case SQLCipherFormatError.wrongKey, SQLCipherFormatError.tooShort: true
        default: false
        }
    }

    /// ``decrypt(to:progress:cancellation:)``, for DBCrypt's routines that fall back on this reader.
    public func writePlaintext(to output: String, progress: (@Sendable (JobProgress) -> Void)?, cancellation: JobCancellation?) throws {
        _ = try decrypt(to: output, progress: progress, cancellation: cancellation)
    }
}
