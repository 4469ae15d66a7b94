import DBCryptCore
import Foundation

/// The key of a store's lookup tags: the first 16 bytes of HMAC-SHA256
/// (the core's ``HMACKey``, its states computed once). A tag is a
/// deterministic function of the entry name, so equal names find their
/// row; it reveals only whether two names are equal.
struct LookupKey: Sendable {
    static let tagCount = 16

    private let key: HMACKey

    init(_ bytes: UnsafeRawBufferPointer) {
        key = HMACKey(bytes)
    }

    /// The first 16 bytes of HMAC-SHA256 of the name's UTF-8 bytes.
    /// - Throws: `SealError.systemFailure` if the key could not be made.
    func tag(_ name: String) throws -> Data {
        var name = name
        guard let mac = name.withUTF8({ key.mac(UnsafeRawBufferPointer($0)) }) else {
            throw SealError.systemFailure(reason: "no memory for the store's lookup key")
        }
        return Data(mac.prefix(Self.tagCount))
    }

    /// Whether `tag` is the tag of `name`, compared in constant time.
    /// - Throws: as ``tag(_:)``.
    func matches(_ name: String, tag: Data) throws -> Bool {
        HMACKey.equal(Array(try self.tag(name)), Array(tag))
    }
}
