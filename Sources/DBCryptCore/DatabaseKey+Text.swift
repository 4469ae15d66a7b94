import CPrimitives

/// A key as text, the form a key file, an environment variable and every
/// key store hold: a passphrase, or a raw key written as SQLCipher writes it.
extension DatabaseKey {
    /// A new random raw key with its own random salt, from the system's
    /// secure random generator: what an app makes on first launch and keeps
    /// in a key store. Opening with it costs no key derivation.
    ///
    /// - throws: ``CipherError/invalidKey(reason:)`` when the system's random
    ///   generator fails (it does not on a working system).
    public static func random() throws -> DatabaseKey {
        var bytes = [UInt8](repeating: 0, count: 48)
        defer { SecretBytes.wipe(&bytes) }
        guard dbcrypt_random_bytes(&bytes, bytes.count) == 1 else {
            throw CipherError.invalidKey(reason: "the system's random generator failed")
        }
        return try DatabaseKey(rawKey: bytes[0..<32], salt: Array(bytes[32...]))
    }

    /// The key read from text as a key file holds it: one trailing newline
    /// (`\n` or `\r\n`) is not part of it; `x'<64 hex digits>'` (or 96, with
    /// the salt) is a raw key; anything else is a passphrase.
    ///
    /// - throws: ``CipherError/invalidKey(reason:)`` when the text is empty,
    ///   or starts as a raw key (`x'`) without being one.
    public init(keyText: some Collection<UInt8>) throws {
        let text = keyText.prefix(Self.keyTextCount(keyText))
        guard !text.isEmpty else { throw CipherError.invalidKey(reason: "it is empty") }
        // x'<hex>' is a raw key (passphrase(bytes:) reads it so); text that
        // starts so but is not one is a mistake, not a passphrase.
        let key = DatabaseKey.passphrase(bytes: text)
        if key.kind == .passphrase, text.count >= 2, text.first! | 0x20 == UInt8(ascii: "x"), text.dropFirst().first == UInt8(ascii: "'") {
            throw CipherError.invalidKey(reason: "a raw key is written x' followed by 64 or 96 hex digits and '")
        }
        self = key
    }

    /// How many bytes of key text are the key: all but one trailing newline
    /// (`\n` or `\r\n`). Trimmed by counting, not by copying, so that no
    /// copy of a secret is left unwiped.
    package static func keyTextCount(_ text: some Collection<UInt8>) -> Int {
        var count = text.count
        if count > 0, text.dropFirst(count - 1).first == UInt8(ascii: "\n") { count -= 1 }
        if count > 0, text.dropFirst(count - 1).first == UInt8(ascii: "\r") { count -= 1 }
        return count
    }

    /// Hands `body` the key as text, the form ``init(keyText:)`` reads: the
    /// passphrase's bytes, or `x'<hex>'` for a raw key (with its salt). For
    /// a key store that keeps the key; `body` must not keep or copy the
    /// bytes anywhere that outlives it. Rethrows what `body` throws.
    public func withKeyText<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withSQLCipherKeyBytes(body)
    }
}

