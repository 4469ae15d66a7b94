import DBCryptCore

/// Credentials and sealing keys read from key text, as a key file, an
/// environment variable or the terminal holds it: one trailing newline
/// (`\n` or `\r\n`) is not part of it. `source` names where the text came
/// from in errors ("the key file key.txt"); the caller wipes the text.
extension StoreCredential {
    /// A passphrase (UTF-8 text), or a raw key written as every key option
    /// and key store reads it (``DatabaseKey/init(keyText:)``: `x'<64 hex
    /// digits>'`, or 96 with a salt, which a store does not use).
    ///
    /// ```swift
    /// let credential = try KeyInput.file("store.key").withText { try StoreCredential(keyText: $0, source: "store.key") }
    /// ```
    ///
    /// - throws: ``SealError/emptyPassphrase(source:)``,
    ///   ``SealError/malformedKeyText(source:)`` for text that starts as a
    ///   key without being one, ``SealError/keyTextNotUTF8(source:what:)``.
    public init(keyText: some Collection<UInt8>, source: String) throws(SealError) {
        guard DatabaseKey.keyTextCount(keyText) > 0 else { throw .emptyPassphrase(source: source) }
        guard let key = try? DatabaseKey(keyText: keyText) else { throw .malformedKeyText(source: source) }
        guard let credential = try? StoreCredential(key) else { throw .keyTextNotUTF8(source: source, what: "passphrase") }
        self = credential
    }
}

extension SealingKey {
    /// A sealing key from text in the forms ``init(text:id:)`` reads (64 hex
    /// digits, Base64 of 32 bytes, 32 bytes of text) or, with `paddedText`,
    /// the padded compatibility form (``init(paddedText:id:)``): the forms
    /// a server's key takes. A key store's raw key is ``init(_:id:)``'s.
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
