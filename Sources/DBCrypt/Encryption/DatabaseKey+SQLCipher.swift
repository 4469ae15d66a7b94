// A key as SQLCipher takes it, and a passphrase derived once for a file.
extension DatabaseKey {
    /// Calls `body` with the bytes SQLCipher takes for this key (the
    /// passphrase, or `x'<hex>'`) and their length as C's `int`. The bytes
    /// must not outlive `body`.
    ///
    /// - throws: ``DBCryptCore/CipherError/invalidKey(reason:)`` past 2 GiB, or what `body` throws.
    func withSQLCipherKey<R>(_ body: (UnsafeRawPointer?, Int32) throws -> R) throws -> R {
        try withSQLCipherKeyBytes { bytes in
            guard let length = Int32(exactly: bytes.count) else {
                throw CipherError.invalidKey(reason: "it is longer than SQLCipher accepts")
            }
            return try body(bytes.baseAddress, length)
        }
    }

    /// This passphrase's key for a new file: PBKDF2 with the settings' salt
    /// (a plaintext header's) or a fresh random one, computed once exactly as
    /// SQLCipher would, as a raw key with that salt. A file written with it
    /// opens with the passphrase; writing and then checking the file with it
    /// costs no further key derivation. Nil for a raw key.
    func derivedForNewFile(_ settings: CipherSettings) -> DatabaseKey? {
        var generator = SystemRandomNumberGenerator()
        // A plaintext header's file does not hold its salt: one made up
        // here would be lost (``CipherSettings/requireSalt(for:path:library:)``).
        guard settings.plaintextHeaderSize == 0 || settings.salt != nil else { return nil }
        return derived(salt: settings.salt ?? (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }, settings)
    }

    /// This passphrase's key for the file whose salt is `salt`, derived once
    /// as SQLCipher would with `settings`, as a raw key with that salt:
    /// further connections open with it at no derivation cost (SQLCipher 3.4
    /// through DBCrypt's provider and 4.x natively take a raw key with its
    /// salt). Nil for a raw key.
    func derived(salt: [UInt8], _ settings: CipherSettings) -> DatabaseKey? {
        derived(salt: salt, hash: settings.kdfHash ?? settings.formatHash, iterations: settings.effectiveKDFIterations)
    }
}
