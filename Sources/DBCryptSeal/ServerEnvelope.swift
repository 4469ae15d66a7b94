import Foundation

/// The envelope servers exchange with their clients: AES-256-GCM with a
/// 12-byte random IV and a 16-byte tag, sent as Base64 of
/// `IV ‖ tag ‖ ciphertext`. The tag comes *before* the ciphertext, unlike
/// CryptoKit's `combined` (nonce ‖ ciphertext ‖ tag), so the two are not
/// interchangeable; this type writes and reads the server's order exactly.
///
/// ```swift
/// let envelope = ServerEnvelope(key: try SealingKey(base64: keyFromTheServer))
/// let text = try envelope.seal("hello")          // Base64, for the server
/// let reply = try envelope.openString(fromServer)
/// ```
///
/// Unlike a sealed value, the envelope names no key and no version: a wrong
/// key and an altered envelope both fail as ``SealError/authenticationFailed``.
public struct ServerEnvelope: Sendable {
    /// The additional data servers of this design authenticate by default.
    public static let defaultAdditionalData = Data("additional-data".utf8)

    static let ivCount = AESGCMKey.nonceCount
    static let tagCount = AESGCMKey.tagCount

    /// The AES-256 key (its id plays no part in the envelope).
    public let key: SealingKey
    /// Authenticated with every envelope, not sent in it.
    public let additionalData: Data

    /// An envelope sealed and opened with `key`, authenticating `additionalData`.
    public init(key: SealingKey, additionalData: Data = ServerEnvelope.defaultAdditionalData) {
        self.key = key
        self.additionalData = additionalData
    }

    /// An envelope authenticating the UTF-8 bytes of `additionalData`.
    public init(key: SealingKey, additionalData: String) {
        self.init(key: key, additionalData: Data(additionalData.utf8))
    }

    /// Seals `plaintext` with a fresh random IV; returns Base64 of IV ‖ tag ‖ ciphertext.
    ///
    /// - throws: ``SealError/systemFailure(reason:)`` if the system gives no
    ///   random bytes or OpenSSL runs out of memory.
    @inlinable
    public func seal(_ plaintext: some DataProtocol) throws -> String {
        try withContiguousBytes(plaintext) { try seal(bytes: $0) }
    }

    /// Seals `plaintext`; see ``seal(_:)-(some DataProtocol)``.
    @usableFromInline
    func seal(bytes plaintext: UnsafeRawBufferPointer) throws -> String {
        var bytes = Data(count: Self.ivCount + Self.tagCount + plaintext.count)
        try bytes.withUnsafeMutableBytes { out in
            let iv = out.baseAddress!, tag = iv + Self.ivCount
            try AESGCMKey.randomNonce(iv)
            try additionalData.withUnsafeBytes { ad in
                try key.cipher.seal(
                    nonce: iv, ad1: ad, ad2: UnsafeRawBufferPointer(start: nil, count: 0),
                    plaintext: plaintext, ciphertext: tag + Self.tagCount, tag: tag)
            }
        }
        return bytes.base64EncodedString()
    }

    /// Seals the UTF-8 bytes of `text`; see ``seal(_:)-(some DataProtocol)``.
    public func seal(_ text: String) throws -> String {
        try seal(Data(text.utf8))
    }

    /// Opens Base64 of IV ‖ tag ‖ ciphertext. Whitespace around the text (a
    /// trailing newline) is ignored.
    ///
    /// - throws: ``SealError/notBase64``, ``SealError/truncated(byteCount:)``
    ///   (shorter than the IV and tag), ``SealError/authenticationFailed``
    ///   (altered, another key, or other additional data).
    public func open(_ envelope: String) throws -> Data {
        guard let bytes = Data(base64Encoded: envelope.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw SealError.notBase64
        }
        guard bytes.count >= Self.ivCount + Self.tagCount else { throw SealError.truncated(byteCount: bytes.count) }
        var plaintext = Data(count: bytes.count - Self.ivCount - Self.tagCount)
        let authentic = try bytes.withUnsafeBytes { envelope in
            try plaintext.withUnsafeMutableBytes { out in
                try additionalData.withUnsafeBytes { ad in
                    let iv = envelope.baseAddress!, tag = iv + Self.ivCount
                    return try key.cipher.open(
                        nonce: iv, ad1: ad, ad2: UnsafeRawBufferPointer(start: nil, count: 0),
                        ciphertext: UnsafeRawBufferPointer(start: tag + Self.tagCount, count: out.count), tag: tag, plaintext: out)
                }
            }
        }
        guard authentic else { throw SealError.authenticationFailed }
        return plaintext
    }

    /// Opens an envelope of UTF-8 text; see ``open(_:)``.
    ///
    /// - throws: as ``open(_:)``, and ``SealError/notUTF8``.
    public func openString(_ envelope: String) throws -> String {
        guard let text = String(data: try open(envelope), encoding: .utf8) else { throw SealError.notUTF8 }
        return text
    }
}
