import CPrimitives
import Foundation

/// An HMAC-SHA256 key with its inner and outer states computed once
/// (``CPrimitives``): read-only once made, so usable from any thread.
package final class HMACKey: @unchecked Sendable {
    // @unchecked: the C key is read-only once made.
    private let key: OpaquePointer?

    /// A key of any length; its bytes are not kept.
    package init(_ bytes: UnsafeRawBufferPointer) {
        key = dbcrypt_hmac_key_new(Int32(DBCRYPT_SHA256.rawValue), bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    deinit { dbcrypt_hmac_key_free(key) }

    /// HMAC-SHA256 of `data`, or nil when the key could not be made (no memory).
    package func mac(_ data: UnsafeRawBufferPointer) -> [UInt8]? {
        guard let key else { return nil }
        var out = [UInt8](repeating: 0, count: 32)
        dbcrypt_hmac(key, data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count, nil, 0, &out)
        return out
    }

    /// Whether `a` and `b` are equal, compared in constant time.
    package static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && dbcrypt_equal(a, b, a.count) == 1
    }
}

/// SHA-256 of `data`, or nil when the library failed.
package func sha256(_ data: UnsafeRawBufferPointer) -> [UInt8]? {
    var digest = [UInt8](repeating: 0, count: 32)
    return dbcrypt_sha256(data.baseAddress, data.count, &digest) == 1 ? digest : nil
}
