import CPrimitives
import Foundation

/// Encrypts a store's entry names for listing: AES-256-CTR with the name's
/// lookup tag as the counter block. With the tag (an HMAC of the name, see
/// ``LookupKey``) this is the SIV construction: deterministic, and
/// authenticated by recomputing the tag of the decrypted name (which
/// ``StoreKeys/openName(_:tag:)`` does). It keeps the length of what it
/// encrypts: ``StoreKeys/sealName(_:tag:)`` pads names first.
final class NameCipher: @unchecked Sendable {
    // @unchecked: the C key locks itself.

    /// Nil when out of memory: every use then throws.
    private let key: OpaquePointer?

    init(_ bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count == 32, "an AES-256 key is 32 bytes")
        key = dbcrypt_ctr_key_new(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }

    deinit { dbcrypt_ctr_key_free(key) }

    /// `bytes` XOR the key stream that starts at `tag` (16 bytes): seals a
    /// name's UTF-8 bytes, and opens a sealed name (unauthenticated until the
    /// caller checks the tag of the result).
    /// - Throws: `SealError.systemFailure` if OpenSSL failed,
    ///   `SealError.storeDamaged` for a tag that is not 16 bytes.
    func apply(_ bytes: Data, tag: Data) throws -> Data {
        guard let key else { throw SealError.systemFailure(reason: "no memory for the store's name key") }
        guard tag.count == LookupKey.tagCount else { throw SealError.storeDamaged(reason: "an entry's tag is not \(LookupKey.tagCount) bytes") }
        var output = Data(count: bytes.count)
        let done = output.withUnsafeMutableBytes { output in
            bytes.withUnsafeBytes { input in
                tag.withUnsafeBytes { counter in
                    dbcrypt_ctr_xor(key, counter.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                    input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count,
                                    output.baseAddress?.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        guard done == 1 else { throw SealError.systemFailure(reason: "OpenSSL could not encrypt a name") }
        return output
    }
}
