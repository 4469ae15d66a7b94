import DBCryptCore

/// Credentials and sealing keys read from key text, as a key file, an
/// environment variable or the terminal holds it: one trailing newline
/// (`\n` or `\r\n`) is not part of it. `source` names where the text came
/// from in errors ("the key file key.txt"); the caller wipes the text.
extension StoreCredential {
    /// A passphrase (UTF-8 text), or a key written `x'<64 hex digits>'`.
    ///
    /// ```swift
    /// let credential = try KeyInput.file("store.key").withText { try StoreCredential(keyText: $0, source: "store.key") }
    /// ```
    ///
    /// - throws: ``SealError/emptyPassphrase(source:)``,
    ///   ``SealError/malformedKeyText(source:)`` for text that starts as a
    ///   key without being one, ``SealError/keyTextNotUTF8(source:what:)``.
    public init(keyText: some Collection<UInt8>, source: String) throws(SealError) {
        let text = keyText.prefix(DatabaseKey.keyTextCount(keyText))
        guard !text.isEmpty else { throw .emptyPassphrase(source: source) }
        if text.count == 67, text.first == UInt8(ascii: "x"), text.dropFirst().first == UInt8(ascii: "'"), text.dropFirst(66).first == UInt8(ascii: "'") {
            guard let key = try? SealingKey(hex: String(decoding: text.dropFirst(2).prefix(64), as: UTF8.self)) else {
                throw .malformedKeyText(source: source)
            }
            self = .key(key)
            return
        }
        guard let passphrase = String(validating: text, as: UTF8.self) else { throw .keyTextNotUTF8(source: source, what: "passphrase") }
        self = .passphrase(passphrase)
    }
}

extension SealingKey {
    /// A sealing key from text in the forms ``init(text:id:)`` reads (64 hex
    /// digits, Base64 of 32 bytes, 32 bytes of text) or, with `paddedText`,
    /// the padded compatibility form (``init(paddedText:id:)``).
    ///
    /// - throws: ``SealError/keyTextNotUTF8(source:what:)``, or
    ///   ``SealError/unusableKeyText(source:reason:)`` saying why the text
    ///   is no key.
    public init(keyText: some Collection<UInt8>, source: String, paddedText: Bool = false, id: UInt32? = nil) throws(SealError) {
        guard let text = String(validating: keyText.prefix(DatabaseKey.keyTextCount(keyText)), as: UTF8.self) else {
            throw .keyTextNotUTF8(source: source, what: "key")
        }
        do {
            self = paddedText ? try SealingKey(paddedText: text, id: id) : try SealingKey(text: text, id: id)
        } catch {
            throw .unusableKeyText(source: source, reason: "\(error)")
        }
    }
}
