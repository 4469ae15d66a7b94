import CPrimitives
import DBCrypt
import Foundation

/// An AES-256-GCM key scheduled once (`CPrimitives`): what
/// sealed values and server envelopes are sealed and opened with. Safe to
/// share between threads: the C key locks itself for each call.
final class AESGCMKey: @unchecked Sendable {
    static let nonceCount = Int(DBCRYPT_GCM_NONCE_SIZE)
    static let tagCount = Int(DBCRYPT_GCM_TAG_SIZE)

    /// Nil when OpenSSL could not make the key (out of memory): every use
    /// then throws.
    private let key: OpaquePointer?

    init(_ bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count == 32, "an AES-256 key is 32 bytes")
        key = dbcrypt_gcm_key_new(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }

    deinit { dbcrypt_gcm_key_free(key) }

    /// Writes a nonce's worth of fresh random bytes at `nonce`.
    /// - Throws: `SealError.systemFailure` if the system gives no random bytes.
    static func randomNonce(_ nonce: UnsafeMutableRawPointer) throws {
        guard dbcrypt_random_bytes(nonce.assumingMemoryBound(to: UInt8.self), nonceCount) == 1 else {
            throw SealError.systemFailure(reason: "the system gave no random bytes for a nonce")
        }
    }

    /// Encrypts `plaintext` to `ciphertext` (as many bytes) and writes the
    /// 16-byte tag; the additional data is `ad1` then `ad2`.
    /// - Throws: `SealError.systemFailure` if OpenSSL fails.
    func seal(
        nonce: UnsafeRawPointer, ad1: UnsafeRawBufferPointer, ad2: UnsafeRawBufferPointer,
        plaintext: UnsafeRawBufferPointer, ciphertext: UnsafeMutableRawPointer, tag: UnsafeMutableRawPointer
    ) throws {
        guard let key, dbcrypt_gcm_seal(
            key, bytes(nonce), bytes(ad1.baseAddress), ad1.count, bytes(ad2.baseAddress), ad2.count,
            bytes(plaintext.baseAddress), plaintext.count, ciphertext.assumingMemoryBound(to: UInt8.self),
            tag.assumingMemoryBound(to: UInt8.self)) == 1
        else { throw SealError.systemFailure(reason: "OpenSSL could not encrypt (out of memory?)") }
    }

    /// Decrypts `ciphertext` to `plaintext` (as many bytes) if the tag
    /// matches; returns false (and leaves `plaintext` zeroed) if it does not.
    /// - Throws: `SealError.systemFailure` if the key could not be made.
    func open(
        nonce: UnsafeRawPointer, ad1: UnsafeRawBufferPointer, ad2: UnsafeRawBufferPointer,
        ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawPointer, plaintext: UnsafeMutableRawBufferPointer
    ) throws -> Bool {
        precondition(plaintext.count == ciphertext.count)
        guard let key else { throw SealError.systemFailure(reason: "OpenSSL could not make the key (out of memory?)") }
        return dbcrypt_gcm_open(
            key, bytes(nonce), bytes(ad1.baseAddress), ad1.count, bytes(ad2.baseAddress), ad2.count,
            bytes(ciphertext.baseAddress), ciphertext.count, bytes(tag), plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self)) == 1
    }
}

private func bytes(_ pointer: UnsafeRawPointer?) -> UnsafePointer<UInt8>? {
    pointer?.assumingMemoryBound(to: UInt8.self)
}

/// Calls `body` with the bytes of `data` in one piece: in place when they
/// are (Data, arrays), else from a copy that is wiped afterwards.
/// Inlinable, like the public generic functions that call it, so that a
/// caller's `Data` goes straight to the non-generic code that does the work.
@inlinable
func withContiguousBytes<Result>(
    _ data: some DataProtocol, _ body: (UnsafeRawBufferPointer) throws -> Result
) rethrows -> Result {
    if let result = try data.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) { return result }
    let regions = data.regions
    if regions.count == 1, let region = regions.first { return try region.withUnsafeBytes(body) }
    return try withWipedCopy(Array(data), body)
}

/// Calls `body` with the UTF-8 bytes of `text` (a context, as additional data).
@usableFromInline
func withUTF8Bytes<Result>(_ text: String, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
    var text = text
    return try text.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
}

/// Calls `body` with the bytes of `copy`, then wipes them.
@usableFromInline
func withWipedCopy<Result>(_ copy: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
    var copy = copy
    defer { copy.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
    return try copy.withUnsafeBytes(body)
}
