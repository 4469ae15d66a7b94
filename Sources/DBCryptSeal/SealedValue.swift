import Foundation

/// The binary form of a sealed value, version 1:
///
///     version (1 byte, 0xD1) ‖ key id (4 bytes, big-endian) ‖ nonce (12) ‖ ciphertext ‖ tag (16)
///
/// AES-256-GCM; the additional data is the 5-byte header followed by the
/// caller's context in UTF-8, so neither the key id nor the context can be
/// changed without the tag failing. 33 bytes on top of the plaintext.
enum SealedFormat {
    static let version1: UInt8 = 0xD1
    /// The high nibble every version byte of the format has.
    static let family: UInt8 = 0xD0
    static let headerCount = 5
    static let nonceCount = AESGCMKey.nonceCount
    static let tagCount = AESGCMKey.tagCount
    static let overhead = headerCount + nonceCount + tagCount

    /// A key id as the 4 bytes of a sealed value's header (big-endian), as
    /// ``writeHeader(keyID:into:)`` writes it: what SQL compares with
    /// `substr(value, 2, 4)`.
    static func keyIDBytes(_ id: UInt32) -> Data {
        Data((0..<4).map { UInt8(truncatingIfNeeded: id >> (24 - 8 * $0)) })
    }

    /// Writes the version byte and the key id at the start of `sealed`.
    static func writeHeader(keyID: UInt32, into sealed: UnsafeMutableRawBufferPointer) {
        sealed[0] = version1
        for index in 1..<headerCount { sealed[index] = UInt8(truncatingIfNeeded: keyID >> (8 * (headerCount - 1 - index))) }
    }

    /// The key id of a sealed value, once its version and length are checked.
    ///
    /// - throws: ``SealError/notSealed``, ``SealError/unsupportedVersion(_:)``, ``SealError/truncated(byteCount:)``.
    static func keyID(of sealed: some DataProtocol) throws -> UInt32 {
        guard let version = sealed.first else { throw SealError.truncated(byteCount: 0) }
        guard version & 0xF0 == family else { throw SealError.notSealed }
        guard version == version1 else { throw SealError.unsupportedVersion(version) }
        guard sealed.count >= overhead else { throw SealError.truncated(byteCount: sealed.count) }
        return sealed.prefix(headerCount).dropFirst().reduce(0) { $0 << 8 | UInt32($1) }
    }
}

extension SealingKey {
    /// Seals `plaintext` under this key with a fresh random nonce, bound to
    /// `context`: opening needs the same key and the same context. Name in
    /// the context where the value lives ("store notes, entry token",
    /// "table account, column password, row 42"), so that a sealed value
    /// copied elsewhere does not open.
    ///
    /// The nonce is drawn by this call and cannot be given, so two seals
    /// never share one. Random 96-bit nonces stay safe for about 2^32 seals
    /// per key: rotate keys long before (``SealedStore/rotateDataKey(progress:cancellation:)``
    /// re-seals a store's entries under a new key).
    ///
    /// - throws: ``SealError/systemFailure(reason:)`` if the system gives no
    ///   random bytes or OpenSSL runs out of memory.
    @inlinable
    public func seal(_ plaintext: some DataProtocol, context: String) throws -> Data {
        try withContiguousBytes(plaintext) { try seal(bytes: $0, context: context) }
    }

    /// Seals `plaintext` bound to `context` (the work of the generic `seal`).
    @usableFromInline
    func seal(bytes plaintext: UnsafeRawBufferPointer, context: String) throws -> Data {
        try withUTF8Bytes(context) { try seal(bytes: plaintext, additionalData: $0) }
    }

    /// Seals `plaintext` bound to `additionalData` (a context's UTF-8 bytes).
    func seal(bytes plaintext: UnsafeRawBufferPointer, additionalData: UnsafeRawBufferPointer) throws -> Data {
        var sealed = Data(count: SealedFormat.overhead + plaintext.count)
        try sealed.withUnsafeMutableBytes { out in
            SealedFormat.writeHeader(keyID: id, into: out)
            let nonce = out.baseAddress! + SealedFormat.headerCount
            let body = nonce + SealedFormat.nonceCount
            try AESGCMKey.randomNonce(nonce)
            try cipher.seal(
                nonce: nonce, ad1: UnsafeRawBufferPointer(rebasing: out[..<SealedFormat.headerCount]),
                ad2: additionalData, plaintext: plaintext, ciphertext: body, tag: body + plaintext.count)
        }
        return sealed
    }

    /// Seals the UTF-8 bytes of `text`; see ``seal(_:context:)-(some DataProtocol,_)``.
    public func seal(_ text: String, context: String) throws -> Data {
        try seal(Data(text.utf8), context: context)
    }

    /// Seals `value` encoded as JSON; see ``seal(_:context:)-(some DataProtocol,_)``.
    /// (Bytes and strings have their own overloads, sealed as they are.)
    ///
    /// - throws: ``SealError/coding(reason:)`` when the value does not encode.
    public func seal<Value: Encodable>(encoding value: Value, context: String) throws -> Data {
        try seal(Self.encode(value), context: context)
    }

    /// Opens a value sealed by ``seal(_:context:)-(some DataProtocol,_)`` with this key and `context`.
    ///
    /// - throws: ``SealError/notSealed``, ``SealError/unsupportedVersion(_:)``,
    ///   ``SealError/truncated(byteCount:)``, ``SealError/wrongKey(sealedWith:given:)``
    ///   (sealed under another key id), ``SealError/authenticationFailed``
    ///   (altered, another context, or another key under this id).
    @inlinable
    public func open(_ sealed: some DataProtocol, context: String) throws -> Data {
        try withContiguousBytes(sealed) { try open(bytes: $0, context: context) }
    }

    /// Opens `sealed` after checking its version, length and key id.
    @usableFromInline
    func open(bytes sealed: UnsafeRawBufferPointer, context: String) throws -> Data {
        let sealedWith = try SealedFormat.keyID(of: sealed)
        guard sealedWith == id else { throw SealError.wrongKey(sealedWith: sealedWith, given: [id]) }
        return try withUTF8Bytes(context) { try openChecked(sealed, additionalData: $0) }
    }

    /// Opens a sealed string; see ``open(_:context:)``.
    ///
    /// - throws: as ``open(_:context:)``, and ``SealError/notUTF8``.
    public func openString(_ sealed: some DataProtocol, context: String) throws -> String {
        guard let text = String(data: try open(sealed, context: context), encoding: .utf8) else { throw SealError.notUTF8 }
        return text
    }

    /// Opens a sealed `Decodable` value; see ``open(_:context:)``.
    ///
    /// - throws: as ``open(_:context:)``, and ``SealError/coding(reason:)``
    ///   when the opened bytes do not decode as `type`.
    public func open<Value: Decodable>(_ type: Value.Type, from sealed: some DataProtocol, context: String) throws -> Value {
        try Self.decode(type, from: open(sealed, context: context))
    }

    /// Opens `sealed` (version, length and key id checked) bound to
    /// `additionalData` (a context's UTF-8 bytes).
    func openChecked(_ sealed: UnsafeRawBufferPointer, additionalData: UnsafeRawBufferPointer) throws -> Data {
        let nonce = sealed.baseAddress! + SealedFormat.headerCount
        let body = UnsafeRawBufferPointer(start: nonce + SealedFormat.nonceCount, count: sealed.count - SealedFormat.overhead)
        var plaintext = Data(count: body.count)
        let authentic = try plaintext.withUnsafeMutableBytes { out in
            try cipher.open(
                nonce: nonce, ad1: UnsafeRawBufferPointer(rebasing: sealed[..<SealedFormat.headerCount]),
                ad2: additionalData, ciphertext: body, tag: body.baseAddress! + body.count, plaintext: out)
        }
        guard authentic else { throw SealError.authenticationFailed }
        return plaintext
    }

    static func encode<Value: Encodable>(_ value: Value) throws -> Data {
        do {
            return try JSONEncoder().encode(value)
        } catch {
            throw SealError.coding(reason: "\(Value.self) does not encode: \(error)")
        }
    }

    static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw SealError.coding(reason: "the opened value is not a \(Value.self)")
        }
    }
}

/// Several keys, one of them current: seals with the current key and opens
/// with whichever key a sealed value names, so values sealed before a key
/// change keep opening until they are sealed again.
public struct SealingKeySet: Sendable, CustomStringConvertible {
    /// The key new values are sealed with.
    public let current: SealingKey
    /// Every key, the current one included, by id.
    private let byID: [UInt32: SealingKey]

    /// A keyring sealing with `current` and opening with it and `others`.
    ///
    /// - throws: ``SealError/invalidKey(reason:)`` when two keys share an id.
    public init(current: SealingKey, others: [SealingKey] = []) throws {
        var keys: [UInt32: SealingKey] = [:]
        for key in [current] + others {
            guard keys[key.id] == nil else {
                throw SealError.invalidKey(reason: "two keys of the keyring have the id \(SealingKey.idText(key.id))")
            }
            keys[key.id] = key
        }
        self.current = current
        byID = keys
    }

    /// The ids of every key, current first.
    public var ids: [UInt32] { [current.id] + byID.keys.filter { $0 != current.id }.sorted() }

    /// The key of `id`, if the ring has it.
    func key(_ id: UInt32) -> SealingKey? { byID[id] }

    /// Seals with the current key; see ``SealingKey/seal(_:context:)-(some DataProtocol,_)``.
    @inlinable
    public func seal(_ plaintext: some DataProtocol, context: String) throws -> Data {
        try current.seal(plaintext, context: context)
    }

    /// Opens with the key the sealed value names.
    ///
    /// - throws: as ``SealingKey/open(_:context:)``; ``SealError/wrongKey(sealedWith:given:)``
    ///   when no key of the ring has its id.
    @inlinable
    public func open(_ sealed: some DataProtocol, context: String) throws -> Data {
        try withContiguousBytes(sealed) { try open(bytes: $0, context: context) }
    }

    /// Opens `sealed` with the key its header names.
    @usableFromInline
    func open(bytes sealed: UnsafeRawBufferPointer, context: String) throws -> Data {
        try withUTF8Bytes(context) { try open(bytes: sealed, additionalData: $0) }
    }

    /// Opens `sealed` with the key its header names, bound to `additionalData`.
    func open(bytes sealed: UnsafeRawBufferPointer, additionalData: UnsafeRawBufferPointer) throws -> Data {
        let sealedWith = try SealedFormat.keyID(of: sealed)
        guard let key = byID[sealedWith] else { throw SealError.wrongKey(sealedWith: sealedWith, given: ids) }
        return try key.openChecked(sealed, additionalData: additionalData)
    }

    /// The ids only.
    public var description: String { "SealingKeySet(ids: \(ids.map(SealingKey.idText)), bytes: <redacted>)" }
}

/// The first name of ``SealingKeySet`` ("keyring" names the system's key stores).
@available(*, deprecated, renamed: "SealingKeySet")
public typealias SealingKeyring = SealingKeySet
