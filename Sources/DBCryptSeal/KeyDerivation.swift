import CArgon2
import CPrimitives
import DBCrypt
import DBCryptCore
import Foundation

/// How a passphrase becomes a key: Argon2id (the default for new stores),
/// scrypt, or PBKDF2-HMAC-SHA256 (for existing data and designs that use
/// it). The parameters are not secret; a store keeps them beside its salt.
public enum KeyDerivation: Sendable, Equatable, Codable, CustomStringConvertible {
    /// Argon2id (RFC 9106), version 0x13: `memoryKiB` of memory, `iterations`
    /// passes, `parallelism` lanes.
    case argon2id(memoryKiB: UInt32, iterations: UInt32, parallelism: UInt32)
    /// scrypt (RFC 7914): cost `n` (a power of two), block size `r`, parallelism `p`.
    case scrypt(n: Int, r: Int, p: Int)
    /// PBKDF2 with HMAC-SHA256 (RFC 8018).
    case pbkdf2SHA256(iterations: Int)

    /// Argon2id with 64 MiB, 3 passes, 1 lane: RFC 9106's second
    /// recommended option, with the lanes this library runs (one thread).
    public static let argon2idDefault = KeyDerivation.argon2id(memoryKiB: 64 * 1024, iterations: 3, parallelism: 1)
    /// scrypt with N = 2^17, r = 8, p = 1 (128 MiB): OWASP's recommendation.
    public static let scryptDefault = KeyDerivation.scrypt(n: 1 << 17, r: 8, p: 1)
    /// PBKDF2-HMAC-SHA256 with 600,000 iterations: OWASP's recommendation.
    public static let pbkdf2SHA256Default = KeyDerivation.pbkdf2SHA256(iterations: 600_000)

    /// The highest memory any derivation may ask for (1 GiB), so that
    /// parameters read from a damaged or hostile file cannot exhaust memory.
    public static let maximumMemoryBytes = 1 << 30

    public var description: String {
        switch self {
        case .argon2id(let memory, let iterations, let parallelism):
            "Argon2id (m = \(memory) KiB, t = \(iterations), p = \(parallelism))"
        case .scrypt(let n, let r, let p): "scrypt (N = \(n), r = \(r), p = \(p))"
        case .pbkdf2SHA256(let iterations): "PBKDF2-HMAC-SHA256 (\(iterations) iterations)"
        }
    }

    /// Checks the parameters: within each function's rules, within
    /// ``maximumMemoryBytes``, and within bounds of time (Argon2id up to
    /// 1,000 passes, PBKDF2 up to 100,000,000 iterations).
    ///
    /// - throws: ``SealError/invalidKeyDerivation(reason:)`` naming the parameter.
    public func validate() throws {
        func refuse(_ reason: String) -> SealError { .invalidKeyDerivation(reason: "\(self): \(reason)") }
        switch self {
        case .argon2id(let memory, let iterations, let parallelism):
            // A store's header names its parameters: a damaged or hostile one
            // must not make opening run for hours.
            guard (1...1_000).contains(iterations) else { throw refuse("1 to 1,000 passes") }
            guard (1...16).contains(parallelism) else { throw refuse("1 to 16 lanes") }
            guard memory >= 8 * parallelism else { throw refuse("at least 8 KiB per lane") }
            guard Int(memory) * 1024 <= Self.maximumMemoryBytes else { throw refuse("more memory than 1 GiB") }
        case .scrypt(let n, let r, let p):
            guard n > 1, n & (n - 1) == 0 else { throw refuse("N is a power of two above 1") }
            guard (1...64).contains(r), (1...16).contains(p) else { throw refuse("r from 1 to 64, p from 1 to 16") }
            guard n.multipliedReportingOverflow(by: 128 * r).partialValue <= Self.maximumMemoryBytes,
                  n <= Self.maximumMemoryBytes else { throw refuse("more memory than 1 GiB") }
        case .pbkdf2SHA256(let iterations):
            guard (1...100_000_000).contains(iterations) else { throw refuse("1 to 100,000,000 iterations") }
        }
    }

    /// Derives `byteCount` bytes from `passphrase` (its UTF-8 bytes) and `salt`.
    ///
    /// - throws: ``SealError/invalidKeyDerivation(reason:)`` for parameters
    ///   ``validate()`` refuses, a salt shorter than 8 bytes, or a failure of
    ///   the function itself (out of memory).
    public func deriveKey(from passphrase: String, salt: some DataProtocol, byteCount: Int = 32) throws -> DerivedKey {
        let secret = SecretBytes(passphrase.utf8)
        return try secret.withUnsafeBytes { try deriveKey(fromBytes: $0, salt: salt, byteCount: byteCount) }
    }

    /// As ``deriveKey(from:salt:byteCount:)`` with the passphrase's bytes.
    public func deriveKey(fromBytes passphrase: UnsafeRawBufferPointer, salt: some DataProtocol, byteCount: Int = 32) throws -> DerivedKey {
        guard salt.count >= 8 else { throw SealError.invalidKeyDerivation(reason: "a salt of at least 8 bytes, not \(salt.count)") }
        guard (16...64).contains(byteCount) else { throw SealError.invalidKeyDerivation(reason: "16 to 64 bytes of key, not \(byteCount)") }
        return try derive(passphrase, salt: salt, byteCount: byteCount)
    }

    /// The derivation, with any salt and length (the RFCs' test vectors use
    /// shorter salts than a store would).
    func derive(_ passphrase: UnsafeRawBufferPointer, salt: some DataProtocol, byteCount: Int) throws -> DerivedKey {
        try validate()
        switch self {
        case .argon2id(let memory, let iterations, let parallelism):
            return try Self.argon2id(
                password: passphrase, salt: Array(salt), secret: [], associatedData: [],
                memoryKiB: memory, iterations: iterations, parallelism: parallelism, byteCount: byteCount)
        case .scrypt(let n, let r, let p):
            let salt = Array(salt)
            var succeeded = false
            let output = SecretBytes(count: byteCount) { out in
                succeeded = dbcrypt_scrypt(passphrase.baseAddress, passphrase.count, salt, salt.count, UInt64(n), UInt64(r), UInt64(p),
                                           UInt64(128 * r * (n + p + 2) + (1 << 20)), out.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                           byteCount) == 1
            }
            guard succeeded else { throw SealError.invalidKeyDerivation(reason: "\(self) failed") }
            return DerivedKey(output)
        case .pbkdf2SHA256(let iterations):
            // CPrimitives' PBKDF2: the one SQLCipher's keys and the page reader use.
            var output = [UInt8](repeating: 0, count: byteCount)
            defer { SecretBytes.wipe(&output) }
            let salt = Array(salt)
            guard let rounds = UInt32(exactly: iterations),
                  dbcrypt_pbkdf2(CipherHash.sha256.cValue, passphrase.baseAddress, passphrase.count, salt, salt.count, rounds,
                                 &output, byteCount) == 1 else {
                throw SealError.invalidKeyDerivation(reason: "\(self) failed")
            }
            return DerivedKey(SecretBytes(output))
        }
    }

    /// Argon2id through the reference implementation, with RFC 9106's
    /// optional secret and associated data (for its test vectors).
    static func argon2id(
        password: UnsafeRawBufferPointer, salt: [UInt8], secret: [UInt8], associatedData: [UInt8],
        memoryKiB: UInt32, iterations: UInt32, parallelism: UInt32, byteCount: Int
    ) throws -> DerivedKey {
        var output = [UInt8](repeating: 0, count: byteCount)
        defer { output.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        var salt = salt, secret = secret, associatedData = associatedData
        let passwordLength = UInt32(password.count)
        // argon2_context's pointers are not const; the library only reads them.
        let password = UnsafeMutableRawPointer(mutating: password.baseAddress)?.assumingMemoryBound(to: UInt8.self)
        let status = output.withUnsafeMutableBufferPointer { out in
            salt.withUnsafeMutableBufferPointer { salt in
                secret.withUnsafeMutableBufferPointer { secret in
                    associatedData.withUnsafeMutableBufferPointer { ad in
                        var context = argon2_context(
                            out: out.baseAddress, outlen: UInt32(out.count),
                            pwd: password, pwdlen: passwordLength,
                            salt: salt.baseAddress, saltlen: UInt32(salt.count),
                            secret: secret.count == 0 ? nil : secret.baseAddress, secretlen: UInt32(secret.count),
                            ad: ad.count == 0 ? nil : ad.baseAddress, adlen: UInt32(ad.count),
                            t_cost: iterations, m_cost: memoryKiB, lanes: parallelism, threads: 1,
                            version: UInt32(ARGON2_VERSION_13.rawValue),
                            allocate_cbk: nil, free_cbk: nil, flags: 0)
                        return argon2id_ctx(&context)
                    }
                }
            }
        }
        guard status == ARGON2_OK.rawValue else {
            throw SealError.invalidKeyDerivation(reason: "Argon2id failed: \(String(cString: argon2_error_message(status)))")
        }
        return DerivedKey(SecretBytes(output))
    }
}
