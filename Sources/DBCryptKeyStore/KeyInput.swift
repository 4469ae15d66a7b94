import DBCryptCore
import Foundation

/// Where a key comes from when a person or a service manager gives it: an
/// environment variable, a file, the terminal, or a key store's item. It
/// reads the text as a key file holds it (``DatabaseKey/init(keyText:)``):
/// a passphrase, or a raw key written `x'<hex>'`, one trailing newline not
/// part of it. Nothing here ever prints or keeps a key; every copy it makes
/// is wiped.
///
/// ```swift
/// let key = try KeyInput.file("/run/secrets/db-key").key()
/// let key = try KeyInput.environment("APP_DB_KEY").key()
/// let key = try KeyInput.item(KeyStoreItem(keyring: "com.example.notes/main")).key()
/// ```
public enum KeyInput: Sendable, CustomStringConvertible {
    /// The text of this environment variable.
    case environment(String)
    /// The text of the file at this path, read as a stream as `cat` reads
    /// it: a FIFO or a process substitution (`<(...)`) is read to its end.
    case file(String)
    /// Typed on the process's terminal (`/dev/tty`) after `prompt`, without
    /// echo; with `confirm`, typed twice. The prompt is written as it is:
    /// escape what it quotes that could drive a terminal.
    case terminal(prompt: String, confirm: Bool)
    /// The key kept in a key store's item.
    case item(KeyStoreItem)

    /// The most text a key may be: far above any passphrase, so that the
    /// file `/dev/zero` is refused at once.
    public static let limit = 64 * 1024

    /// Where the key comes from, as sentences name it: "the environment
    /// variable APP_DB_KEY", "the key file key.txt", "the terminal", "the
    /// Secret Service (com.example.notes/main)".
    public var description: String {
        switch self {
        case let .environment(name): "the environment variable \(name)"
        case let .file(path): "the key file \(path)"
        case .terminal: "the terminal"
        case let .item(item): "\(item.store.name) (\(item.name))"
        }
    }

    /// The key given there: a passphrase, or a raw key written `x'<hex>'`.
    ///
    /// - throws: ``KeyInputError`` when the text cannot be read or is no
    ///   key (``KeyInputError/empty(source:)``,
    ///   ``KeyInputError/malformedRawKey(source:)``; see
    ///   ``withText(_:)`` for the rest); for an item, the
    ///   ``KeyStoreError`` its store throws.
    public func key() throws -> DatabaseKey {
        if case let .item(item) = self { return try item.load() }
        return try withText { text throws(KeyInputError) in try Self.key(text: text, source: description) }
    }

    /// Hands `body` the text given there, not yet trimmed of a trailing
    /// newline (an item's key as ``DatabaseKey/withKeyText(_:)`` writes
    /// it), then wipes it: `body` must not keep or copy the bytes anywhere
    /// that outlives it. Rethrows what `body` throws.
    ///
    /// - throws: ``KeyInputError/notSet(variable:)`` for a variable that
    ///   is not set; ``KeyInputError/tooLong(source:)`` past ``limit``
    ///   bytes; ``KeyInputError/unreadable(source:reason:)`` for a file
    ///   that cannot be read; ``KeyInputError/noTerminal`` when the process
    ///   has no terminal to ask on; ``KeyInputError/keysDiffer`` when the
    ///   two typed keys differ; for an item, the ``KeyStoreError`` its
    ///   store throws.
    public func withText<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        switch self {
        case let .environment(name):
            guard let value = ProcessInfo.processInfo.environment[name] else { throw KeyInputError.notSet(variable: name) }
            guard value.utf8.count <= Self.limit else { throw KeyInputError.tooLong(source: description) }
            var bytes = Array(value.utf8)
            defer { SecretBytes.wipe(&bytes) }
            return try bytes.withUnsafeBytes(body)
        case let .file(path):
            let bytes: SecretBytes
            do throws(FileError) {
                bytes = try WholeFile.read(streamAt: path, limit: Self.limit)
            } catch {
                if case .tooLarge = error { throw KeyInputError.tooLong(source: description) }
                throw KeyInputError.unreadable(source: description, reason: error.reason)
            }
            return try bytes.withUnsafeBytes(body)
        case let .terminal(prompt, confirm):
            var bytes = try TerminalPrompt.ask(prompt, confirm: confirm)
            defer { SecretBytes.wipe(&bytes) }
            return try bytes.withUnsafeBytes(body)
        case let .item(item):
            return try item.load().withKeyText(body)
        }
    }

    /// The key in `text`, read from `source`, as ``DatabaseKey/init(keyText:)``
    /// reads it, with its errors in sentences that name the source.
    static func key(text: UnsafeRawBufferPointer, source: String) throws(KeyInputError) -> DatabaseKey {
        do {
            return try DatabaseKey(keyText: text)
        } catch {
            guard DatabaseKey.keyTextCount(text) > 0 else { throw .empty(source: source) }
            throw .malformedRawKey(source: source)
        }
    }
}
