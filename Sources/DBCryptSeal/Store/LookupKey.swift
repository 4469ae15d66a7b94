import CPrimitives
import Foundation

/// The key of a store's lookup tags: HMAC-SHA256 with its states computed
/// once (`CPrimitives`). A tag is a deterministic function of the entry name,
/// so equal names find their row; it reveals only whether two names are equal.
final class LookupKey: @unchecked Sendable {
    // @unchecked: the C key is read-only once made.
    static let tagCount = 16

    /// Nil when out of memory: every use then throws.
    private let key: OpaquePointer?

    init(_ bytes: UnsafeRawBufferPointer) {
        key = dbcrypt_hmac_key_new(Int32(DBCRYPT_SHA256.rawValue), bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    deinit { dbcrypt_hmac_key_free(key) }

    /// The first 16 bytes of HMAC-SHA256 of the name's UTF-8 bytes.
    /// - Throws: `SealError.systemFailure` if the key could not be made.
    func tag(_ name: String) throws -> Data {
        guard let key else { throw SealError.systemFailure(reason: "no memory for the store's lookup key") }
        var name = name
        return name.withUTF8 { name in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { mac in
                dbcrypt_hmac(key, name.baseAddress, name.count, nil, 0, mac.baseAddress!)
                return Data(UnsafeBufferPointer(rebasing: mac[..<Self.tagCount]))
            }
        }
    }

    /// Whether `tag` is the tag of `name`, compared in constant time.
    /// - Throws: as ``tag(_:)``.
    func matches(_ name: String, tag: Data) throws -> Bool {
        let expected = try self.tag(name)
        guard tag.count == expected.count else { return false }
        return expected.withUnsafeBytes { expected in
            tag.withUnsafeBytes { tag in
                dbcrypt_equal(expected.baseAddress, tag.baseAddress, expected.count) == 1
            }
        }
    }
}
