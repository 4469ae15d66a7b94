import DBCryptCore
import Foundation

/// The bytes a ``KeyDerivation`` derived from a passphrase: kept in memory
/// that is wiped when the last copy is released, and never printed.
///
/// ```swift
/// let derived = try KeyDerivation.argon2idDefault.deriveKey(from: passphrase, salt: salt)
/// let key = try SealingKey(bytes: derived)
/// ```
public struct DerivedKey: ContiguousBytes, Sendable, CustomStringConvertible {
    let secret: SecretBytes

    init(_ secret: SecretBytes) { self.secret = secret }

    /// How many bytes it holds.
    public var count: Int { secret.count }

    /// Calls `body` with the bytes; they must not outlive the call.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try secret.withUnsafeBytes(body)
    }

    /// The length only: `DerivedKey(32 bytes: <redacted>)`.
    public var description: String { "DerivedKey(\(count) bytes: <redacted>)" }
}

/// HKDF-SHA256 (RFC 5869) of `key`, with no salt (32 zero bytes), for
/// `info`: 32 bytes, one block of its expansion.
package func hkdfSHA256(_ key: SecretBytes, info: String) -> SecretBytes? {
    let zeros = [UInt8](repeating: 0, count: 32)
    guard var pseudorandom = key.withUnsafeBytes({ ikm in zeros.withUnsafeBytes { HMACKey($0).mac(ikm) } }) else { return nil }
    defer { SecretBytes.wipe(&pseudorandom) }
    let message = Array(info.utf8) + [1]
    guard var block = pseudorandom.withUnsafeBytes({ prk in message.withUnsafeBytes { HMACKey(prk).mac($0) } }) else { return nil }
    defer { SecretBytes.wipe(&block) }
    return SecretBytes(block)
}
