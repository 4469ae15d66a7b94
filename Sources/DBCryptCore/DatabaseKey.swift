import CPrimitives

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
/// DBCrypt, SQLCipherFormat and DBCryptSeal's sealed store all take this one
/// type.
///
/// A key never leaks: its description and debug description are
/// `<redacted>`, `dump` shows nothing of it, the bytes live in memory that is
/// wiped when the last copy of the key is released, and they reach SQLCipher
/// through `sqlite3_key_v2` or a bound parameter, never SQL text.
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
    /// A passphrase's bytes, or a raw key's 32 bytes.
    package let secret: SecretBytes
    /// The salt a raw key carries (``Kind/rawWithSalt``); not secret.
    package let salt: [UInt8]?

    private init(kind: Kind, secret: SecretBytes, salt: [UInt8]?) {
        self.kind = kind
        self.secret = secret
        self.salt = salt
    }

    /// A passphrase key from text (its UTF-8 bytes). The bytes are copied and
    /// the copy is wiped; the caller's `String` cannot be. As in every
    /// SQLCipher, text written exactly `x'<64 or 96 hex digits>'` is that raw
    /// key (with its salt), not a passphrase.
    public static func passphrase(_ passphrase: String) -> DatabaseKey {
        Self.passphrase(bytes: passphrase.utf8)
    }

    /// A passphrase key from bytes, which need not be text; `x'<hex>'` is a
    /// raw key, as in ``passphrase(_:)``.
    public static func passphrase(bytes: some Sequence<UInt8>) -> DatabaseKey {
        let secret = SecretBytes(bytes)
        return secret.withUnsafeBytes { rawKey(spelled: $0) } ?? DatabaseKey(kind: .passphrase, secret: secret, salt: nil)
    }

    /// A raw key: 32 bytes used as the encryption key with no derivation, and
    /// optionally the 16-byte salt the file's HMAC key derivation uses.
    ///
    /// - throws: ``CipherError/invalidKey(reason:)`` when the key is not 32
    ///   bytes or the salt not 16.
    public init(rawKey: some Collection<UInt8>, salt: [UInt8]? = nil) throws {
        guard rawKey.count == 32 else {
            throw CipherError.invalidKey(reason: "a raw key is 32 bytes, not \(rawKey.count)")
        }
        if let salt, salt.count != 16 {
            throw CipherError.invalidKey(reason: "a raw key's salt is 16 bytes, not \(salt.count)")
        }
        self.init(kind: salt == nil ? .raw : .rawWithSalt, secret: SecretBytes(rawKey), salt: salt)
    }

    /// A raw key written as SQLCipher writes it: `x'<64 hex digits>'`, or
    /// `x'<96 hex digits>'` for key and salt.
    ///
    /// - throws: ``CipherError/invalidKey(reason:)`` when the text is not of that form.
    public init(sqlcipherRawKey text: String) throws {
        let secret = SecretBytes(text.utf8)
        guard let key = secret.withUnsafeBytes({ Self.rawKey(spelled: $0) }) else {
            throw CipherError.invalidKey(reason: "a raw key is written x' followed by 64 or 96 hex digits and '")
        }
        self = key
    }

    /// Whether the key has no bytes (an empty passphrase).
    public var isEmpty: Bool { secret.count == 0 }

    /// `<redacted>`.
    public var description: String { "<redacted>" }
    /// `DatabaseKey(<redacted>)`.
    public var debugDescription: String { "DatabaseKey(<redacted>)" }
    /// A mirror with no children, so `dump` and debuggers show nothing of the key.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    // MARK: - For the libraries

    /// Hands `body` the bytes SQLCipher takes for this key: the passphrase,
    /// or `x'<hex>'` for a raw key (with its salt). `body` must not keep or
    /// copy them anywhere that outlives it.
    package func withSQLCipherKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard kind != .passphrase else { return try secret.withUnsafeBytes(body) }
        let salt = self.salt ?? []
        // Written in place: no array of the digits is left unwiped.
        let spelled = secret.withUnsafeBytes { key in
            salt.withUnsafeBytes { salt in
                SecretBytes(count: 3 + 2 * (key.count + salt.count)) { text in
                    text[0] = UInt8(ascii: "x")
                    text[1] = UInt8(ascii: "'")
                    var index = 2
                    for byte in key {
                        Hex.write(byte, into: text, at: index, uppercase: true)
                        index += 2
                    }
                    for byte in salt {
                        Hex.write(byte, into: text, at: index, uppercase: true)
                        index += 2
                    }
                    text[index] = UInt8(ascii: "'")
                }
            }
        }
        return try spelled.withUnsafeBytes(body)
    }

    /// The 32-byte encryption key for a file with `salt`: a raw key as it
    /// is, a passphrase through PBKDF2 with `hash` and `iterations`, as
    /// SQLCipher derives it.
    ///
    /// - throws: ``CipherError/invalidSetting(name:reason:)`` when PBKDF2
    ///   refuses the iteration count (or runs out of memory).
    package func encryptionKey(salt: [UInt8], hash: CipherHash, iterations: Int) throws -> SecretBytes {
        guard kind == .passphrase else { return secret }
        var derived = [UInt8](repeating: 0, count: 32)
        defer { SecretBytes.wipe(&derived) }
        let ok = secret.withUnsafeBytes { pass in
            guard let rounds = UInt32(exactly: iterations) else { return Int32(0) }
            return dbcrypt_pbkdf2(hash.cValue, pass.baseAddress, pass.count, salt, salt.count, rounds, &derived, 32)
        }
        guard ok == 1 else { throw CipherError.invalidSetting(name: "kdf_iter", reason: "PBKDF2 refused \(iterations) iterations") }
        return SecretBytes(derived)
    }

    /// This passphrase's key for a file whose salt is `salt`, derived once
    /// exactly as SQLCipher derives it, as a raw key with that salt: further
    /// connections open with it at no derivation cost. Nil for a raw key, a
    /// salt that is not 16 bytes, or an iteration count PBKDF2 refuses.
    package func derived(salt: [UInt8], hash: CipherHash, iterations: Int) -> DatabaseKey? {
        guard kind == .passphrase, salt.count == 16, let key = try? encryptionKey(salt: salt, hash: hash, iterations: iterations) else {
            return nil
        }
        return DatabaseKey(kind: .rawWithSalt, secret: key, salt: salt)
    }

    /// The raw key `text` spells as SQLCipher reads it (`x'` + 64 or 96 hex
    /// digits + `'`, in either case), or nil for anything else.
    private static func rawKey(spelled text: UnsafeRawBufferPointer) -> DatabaseKey? {
        guard text.count == 67 || text.count == 99, text[0] | 0x20 == UInt8(ascii: "x"), text[1] == UInt8(ascii: "'"),
              text[text.count - 1] == UInt8(ascii: "'"), var bytes = Hex.decode(text[2..<text.count - 1]) else { return nil }
        defer { SecretBytes.wipe(&bytes) }
        return try? DatabaseKey(rawKey: bytes[0..<32], salt: bytes.count == 48 ? Array(bytes[32...]) : nil)
    }
}
