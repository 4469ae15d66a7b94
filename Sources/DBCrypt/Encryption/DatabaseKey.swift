import CCipherProvider

/// The key of an encrypted database: a passphrase, or a raw 256-bit key.
///
/// ```swift
/// let key = DatabaseKey.passphrase("correct horse battery staple")
/// let raw = try DatabaseKey(rawKey: keyBytes)          // 32 bytes, no key derivation
/// let db = try Database(path: "notes.db", key: key)
/// ```
///
/// A passphrase goes through SQLCipher's key derivation (PBKDF2) with the
/// salt stored in the file's first 16 bytes. A raw key is used as it is;
/// with an explicit 16-byte salt it is SQLCipher's `x'<key><salt>'` form.
///
/// A key never leaks through DBCrypt: its description and debug description
/// are `<redacted>`, `dump` shows nothing of it, the bytes live in memory
/// DBCrypt zeroes when the last copy of the key is released, and they reach
/// SQLCipher through `sqlite3_key_v2` or a bound parameter, never SQL text.
public struct DatabaseKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// What kind of key this is.
    public enum Kind: Sendable, Equatable {
        /// A passphrase, stretched by SQLCipher's key derivation.
        case passphrase
        /// A raw 32-byte key; the salt is the file's own.
        case raw
        /// A raw 32-byte key with an explicit 16-byte salt.
        case rawWithSalt
    }

    /// What kind of key this is.
    public let kind: Kind
    /// The bytes SQLCipher receives: the passphrase, or `x'<hex>'` for a raw key.
    let material: SecretBytes
    /// The salt a raw key carries (``Kind/rawWithSalt``); not secret.
    let salt: [UInt8]?

    private init(kind: Kind, material: SecretBytes, salt: [UInt8]? = nil) {
        self.kind = kind
        self.material = material
        self.salt = salt
    }

    /// A passphrase key from text (its UTF-8 bytes). DBCrypt copies the bytes
    /// and wipes its copy; it cannot wipe the caller's `String`. As in every
    /// SQLCipher, text written exactly `x'<64 or 96 hex digits>'` is taken as
    /// that raw key, not as a passphrase.
    public static func passphrase(_ passphrase: String) -> DatabaseKey {
        DatabaseKey(kind: .passphrase, material: SecretBytes(passphrase.utf8))
    }

    /// A passphrase key from bytes, which need not be text.
    public static func passphrase(bytes: some Sequence<UInt8>) -> DatabaseKey {
        DatabaseKey(kind: .passphrase, material: SecretBytes(bytes))
    }

    /// A raw key: 32 bytes used as the encryption key with no derivation, and
    /// optionally the 16-byte salt the file's HMAC key derivation uses.
    ///
    /// - throws: ``DatabaseError/invalidKey(reason:)`` when the key is not 32
    ///   bytes or the salt not 16.
    public init(rawKey: some Collection<UInt8>, salt: [UInt8]? = nil) throws {
        guard rawKey.count == 32 else {
            throw DatabaseError.invalidKey(reason: "a raw key must be 32 bytes, not \(rawKey.count)")
        }
        if let salt, salt.count != 16 {
            throw DatabaseError.invalidKey(reason: "a raw key's salt must be 16 bytes, not \(salt.count)")
        }
        var text: [UInt8] = Array("x'".utf8)
        Self.appendHex(rawKey, to: &text)
        if let salt { Self.appendHex(salt, to: &text) }
        text.append(UInt8(ascii: "'"))
        self.init(kind: salt == nil ? .raw : .rawWithSalt, material: SecretBytes(text), salt: salt)
        text.withUnsafeMutableBytes { SecretBytes.wipe($0) }
    }

    /// A raw key written as SQLCipher writes it: `x'<64 hex digits>'`, or
    /// `x'<96 hex digits>'` for key and salt.
    ///
    /// - throws: ``DatabaseError/invalidKey(reason:)`` when the text is not of that form.
    public init(sqlcipherRawKey text: String) throws {
        let utf8 = Array(text.utf8)
        guard utf8.count == 67 || utf8.count == 99,
              utf8[0] == UInt8(ascii: "x") || utf8[0] == UInt8(ascii: "X"), utf8[1] == UInt8(ascii: "'"),
              utf8.last == UInt8(ascii: "'") else {
            throw DatabaseError.invalidKey(reason: "a raw key is written x' followed by 64 or 96 hex digits and '")
        }
        var bytes: [UInt8] = []
        var index = 2
        while index < utf8.count - 1 {
            guard let high = Self.hexValue(utf8[index]), let low = Self.hexValue(utf8[index + 1]) else {
                bytes.withUnsafeMutableBytes { SecretBytes.wipe($0) }
                throw DatabaseError.invalidKey(reason: "a raw key holds hex digits only")
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        defer { bytes.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        try self.init(rawKey: bytes[0..<32], salt: bytes.count == 48 ? Array(bytes[32..<48]) : nil)
    }

    /// This passphrase's key for a new file: PBKDF2 with the settings' salt
    /// (a plaintext header's) or a fresh random one,
    /// computed once by DBCrypt's provider exactly as SQLCipher would, as a raw
    /// key with that salt. A file written with it opens with the passphrase;
    /// writing and then checking the file with it costs no further key
    /// derivation. Nil for a raw key.
    func derivedForNewFile(_ settings: CipherSettings) -> DatabaseKey? {
        var generator = SystemRandomNumberGenerator()
        // A plaintext header's file does not hold its salt: one made up
        // here would be lost (``CipherSettings/requireSalt(for:path:library:)``).
        guard settings.plaintextHeaderSize == 0 || settings.salt != nil else { return nil }
        return derived(salt: settings.salt ?? (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }, settings)
    }

    /// This passphrase's key for the file whose first 16 bytes are `salt`,
    /// derived once by DBCrypt's provider as SQLCipher would with `settings`,
    /// as a raw key with that salt: further connections open with it at no
    /// derivation cost (SQLCipher 3.4 through DBCrypt's provider and 4.x
    /// natively take a raw key with its salt). Nil for a raw key.
    func derived(salt: [UInt8], _ settings: CipherSettings) -> DatabaseKey? {
        guard kind == .passphrase, salt.count == 16 else { return nil }
        var key = [UInt8](repeating: 0, count: 32)
        defer { key.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        let mode = settings.format == .sqlcipher4 ? DBCRYPT_MODE_SHA512 : DBCRYPT_MODE_SHA1
        let code = material.withUnsafeBytes { pass in
            guard let length = Int32(exactly: pass.count), let iterations = Int32(exactly: settings.effectiveKDFIterations) else {
                return Int32(-1)
            }
            return dbcrypt_provider_derive_key(pass.baseAddress, length, salt, 16, iterations, Int32(mode), &key)
        }
        guard code == 0 else { return nil }
        return try? DatabaseKey(rawKey: key, salt: salt)
    }

    /// The length of ``material`` for SQLCipher's C API.
    ///
    /// - throws: ``DatabaseError/invalidKey(reason:)`` past 2 GiB.
    func materialLength() throws -> Int32 {
        guard let length = Int32(exactly: material.count) else {
            throw DatabaseError.invalidKey(reason: "it is longer than SQLCipher accepts")
        }
        return length
    }

    /// Hands `body` the bytes SQLCipher receives for this key: the passphrase,
    /// or `x'<hex>'` for a raw key (with its salt). For readers of the file
    /// format that do not go through SQLCipher (SQLCipherFormat); `body` must
    /// not keep or copy them anywhere that outlives it.
    public func withSQLCipherKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try material.withUnsafeBytes(body)
    }

    /// Whether the key has no bytes (an empty passphrase).
    public var isEmpty: Bool { material.count == 0 }

    /// `<redacted>`.
    public var description: String { "<redacted>" }
    /// `DatabaseKey(<redacted>)`.
    public var debugDescription: String { "DatabaseKey(<redacted>)" }
    /// A mirror with no children, so `dump` and debuggers show nothing of the key.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    private static func appendHex(_ bytes: some Collection<UInt8>, to text: inout [UInt8]) {
        let digits = Array("0123456789ABCDEF".utf8)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
