import CPageCipher

/// The key of a SQLCipher file, as SQLCipher takes it: a passphrase
/// (stretched with PBKDF2 and the file's salt), or a raw 32-byte key,
/// optionally with the 16-byte salt, which a file with a plaintext header
/// needs because its salt is not in the file.
///
/// The key's bytes are wiped when the last copy of the key is released, and
/// never appear in a description.
public struct FileKey: Sendable, CustomStringConvertible {
    /// A passphrase's bytes, or a raw key's 32 bytes.
    let secret: Secret
    /// Whether ``secret`` is a raw key, used without key derivation.
    let isRaw: Bool
    /// A raw key's salt, when given with it (not a secret).
    public let salt: [UInt8]?

    /// A passphrase. As in SQLCipher, bytes spelled `x'<64 hex digits>'` or
    /// `x'<96 hex digits>'` are a raw key (with its salt) instead.
    public static func passphrase(bytes: some Sequence<UInt8>) -> FileKey {
        var bytes = Array(bytes)
        defer { bytes.withUnsafeMutableBytes { dbcrypt_page_wipe($0.baseAddress, $0.count) } }
        if let raw = rawKey(spelled: bytes) { return raw }
        return FileKey(secret: Secret(bytes), isRaw: false, salt: nil)
    }

    /// A passphrase from text (its UTF-8 bytes); `x'<hex>'` is a raw key, as in SQLCipher.
    public static func passphrase(_ text: String) -> FileKey { passphrase(bytes: text.utf8) }

    /// A raw key: the 32-byte encryption key itself, and optionally the salt.
    ///
    /// - throws: ``SQLCipherFormatError/invalidKey(_:)`` when the key is not 32 bytes or the salt not 16.
    public init(rawKey: some Collection<UInt8>, salt: [UInt8]? = nil) throws {
        guard rawKey.count == 32 else { throw SQLCipherFormatError.invalidKey("a raw key is 32 bytes, not \(rawKey.count)") }
        if let salt, salt.count != 16 { throw SQLCipherFormatError.invalidKey("a salt is 16 bytes, not \(salt.count)") }
        self.init(secret: Secret(rawKey), isRaw: true, salt: salt)
    }

    private init(secret: Secret, isRaw: Bool, salt: [UInt8]?) {
        self.secret = secret
        self.isRaw = isRaw
        self.salt = salt
    }

    /// This key with `salt`, for a file whose salt is not in it. A passphrase
    /// keeps it beside; a raw key's own salt wins.
    func with(salt newSalt: [UInt8]?) -> FileKey {
        FileKey(secret: secret, isRaw: isRaw, salt: salt ?? newSalt)
    }

    /// `<redacted>`: a key is never printed.
    public var description: String { "<redacted>" }

    /// `x'` + 64 or 96 hex digits + `'`, as SQLCipher reads it; nil for anything else.
    private static func rawKey(spelled text: [UInt8]) -> FileKey? {
        guard text.count == 67 || text.count == 99, text[0] | 0x20 == UInt8(ascii: "x"), text[1] == UInt8(ascii: "'"),
              text.last == UInt8(ascii: "'") else { return nil }
        var bytes = [UInt8](repeating: 0, count: (text.count - 3) / 2)
        defer { bytes.withUnsafeMutableBytes { dbcrypt_page_wipe($0.baseAddress, $0.count) } }
        for index in bytes.indices {
            guard let high = hexValue(text[2 + 2 * index]), let low = hexValue(text[3 + 2 * index]) else { return nil }
            bytes[index] = high << 4 | low
        }
        return try? FileKey(rawKey: bytes[0..<32], salt: bytes.count == 48 ? Array(bytes[32...]) : nil)
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Bytes that are wiped when released.
final class Secret: @unchecked Sendable {
    // Immutable after init, so sharing across threads is safe.
    private let pointer: UnsafeMutableRawBufferPointer

    init(_ bytes: some Collection<UInt8>) {
        pointer = .allocate(byteCount: max(bytes.count, 1), alignment: 16)
        pointer.initializeMemory(as: UInt8.self, repeating: 0)
        pointer.copyBytes(from: bytes)
        count = bytes.count
    }

    /// How many bytes.
    let count: Int

    /// Hands the bytes to `body`, which must not keep them.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: pointer[0..<count]))
    }

    deinit {
        dbcrypt_page_wipe(pointer.baseAddress, pointer.count)
        pointer.deallocate()
    }
}
