import DBCrypt
import DBCryptCore
import DBCryptSeal
import Foundation

/// The statements of interactive sessions, for the arrow keys and Ctrl-R.
///
/// Off (``inMemory``), they live in this process alone. On, they are also
/// kept in one file, sealed (AES-256-GCM) with a key derived from the
/// database's key: from a raw key by HKDF-SHA256; from a passphrase by
/// PBKDF2-HMAC-SHA256 (600,000 iterations) first, so that the file costs a
/// guesser as much as the database does. The file is rewritten whole and
/// atomically after each statement, and is never written in plaintext.
/// A statement that holds a key (`PRAGMA key`, `rekey`, `ATTACH ... KEY`) is
/// recorded nowhere, not even in memory.
public final class ShellHistory {
    /// At most this many statements are kept.
    static let limit = 1000
    private static let magic = Array("DBCRYPT-HISTORY1".utf8)
    private static let context = "dbcrypt shell history"

    /// The sealed file, nil when the history is kept in memory only.
    public let path: String?
    private var sealing: (key: SealingKey, salt: [UInt8])?
    private var entries: [String] = []
    private let note: (String) -> Void

    /// A history kept in this process only.
    public static func inMemory() -> ShellHistory {
        ShellHistory(path: nil, note: { _ in })
    }

    private init(path: String?, note: @escaping (String) -> Void) {
        self.path = path
        self.note = note
    }

    /// The sealed history of the database at `database` under `key`, in
    /// `$XDG_STATE_HOME/dbcrypt/history` (else `~/.local/state/...`), named
    /// by a hash of the database's real path. A file that does not open
    /// with this key (the key changed outside the shell) is left alone and
    /// a new history begins; `note` says so.
    ///
    /// - throws: ``ShellError`` when the folder cannot be made, or the file
    ///   cannot be read.
    public static func sealed(for database: String, key: DatabaseKey, note: @escaping (String) -> Void) throws -> ShellHistory {
        let environment = ProcessInfo.processInfo.environment
        let state = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (NSHomeDirectory() as NSString).appendingPathComponent(".local/state")
        let folder = (state as NSString).appendingPathComponent("dbcrypt/history")
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw ShellError("Cannot make \(folder) for the history: \(error.localizedDescription)")
        }
        let real = URL(fileURLWithPath: database).resolvingSymlinksInPath().path
        let name = Hex.encode((Array(real.utf8).withUnsafeBytes { sha256($0) } ?? []).prefix(16)) + ".sealed"
        let history = ShellHistory(path: (folder as NSString).appendingPathComponent(name), note: note)
        try history.load(key: key)
        return history
    }

    /// Reads the file, if any, under `key`; makes the sealing key for what is written next.
    private func load(key: DatabaseKey) throws {
        guard let path else { return }
        if let data = FileManager.default.contents(atPath: path) {
            let bytes = Array(data)
            if bytes.count > Self.magic.count + 16, Array(bytes.prefix(Self.magic.count)) == Self.magic {
                let salt = Array(bytes[Self.magic.count..<Self.magic.count + 16])
                let sealingKey = try Self.sealingKey(from: key, salt: salt)
                if let opened = try? sealingKey.open([String].self, from: Data(bytes[(Self.magic.count + 16)...]), context: Self.context) {
                    entries = opened
                    sealing = (sealingKey, salt)
                    return
                }
            }
            // Kept, under another name: it may open with another key.
            let aside = path + ".unopened-\(Int(Date().timeIntervalSince1970))"
            if rename(path, aside) == 0 {
                note("The history at \(path) does not open with this key (was the key changed outside the shell?): it is kept as \(aside), and a new one begins.")
            } else {
                throw ShellError("The history at \(path) does not open with this key, and cannot be moved aside: \(String(cString: strerror(errno))).")
            }
        } else if FileManager.default.fileExists(atPath: path) {
            throw ShellError("Cannot read the history at \(path): check its permissions.")
        }
        try rekey(key)
    }

    /// Seals the history under `key` from now on (after `.rekey` or `PRAGMA rekey`), with a new salt.
    ///
    /// - throws: ``ShellError`` when the key cannot be derived or the file written.
    func rekey(_ key: DatabaseKey) throws {
        guard path != nil else { return }
        var salt = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in salt.indices { salt[index] = UInt8.random(in: 0...255, using: &generator) }
        sealing = (try Self.sealingKey(from: key, salt: salt), salt)
        try save()
    }

    private static func sealingKey(from key: DatabaseKey, salt: [UInt8]) throws -> SealingKey {
        var material = key.secret
        if key.kind == .passphrase {
            let derived = try material.withUnsafeBytes { try KeyDerivation.pbkdf2SHA256Default.deriveKey(fromBytes: $0, salt: salt) }
            material = derived.withUnsafeBytes { SecretBytes($0) }
        }
        guard let bytes = hkdfSHA256(material, info: context + " " + Hex.encode(salt)) else {
            throw ShellError("Cannot derive the history's key.")
        }
        return try bytes.withUnsafeBytes { try SealingKey(bytes: $0) }
    }

    /// Puts the kept statements into libedit's list, oldest first.
    func loadIntoEditor() {
        for entry in entries { LineEditor.remember(entry) }
    }

    /// Records the lines of one statement or dot-command, unless it holds a key.
    func record(_ lines: [String]) {
        let text = lines.joined(separator: "\n")
        guard !text.allSatisfy(\.isWhitespace), !Self.holdsKey(text) else { return }
        for line in lines where !line.allSatisfy(\.isWhitespace) { LineEditor.remember(line) }
        guard path != nil else { return }
        entries.append(contentsOf: lines.filter { !$0.allSatisfy(\.isWhitespace) })
        if entries.count > Self.limit { entries.removeFirst(entries.count - Self.limit) }
        do {
            try save()
        } catch {
            note("\(error)")
        }
    }

    private func save() throws {
        guard let path, let sealing else { return }
        let sealed = try sealing.key.seal(encoding: entries, context: Self.context)
        do throws(FileError) {
            try SiblingFile.replace(path, with: Data(Self.magic + sealing.salt) + sealed)
        } catch {
            throw ShellError("Cannot write the history at \(path): \(error.reason).")
        }
    }

    /// Whether `statement` may hold a key: a `PRAGMA` of `key`, `rekey`,
    /// `hexkey`, `hexrekey`, `textkey` or `textrekey` (of any schema, its
    /// name quoted or not, comments anywhere), or an `ATTACH` with `KEY`, in
    /// any case, anywhere in the text (erring on the side of not recording).
    static func holdsKey(_ statement: String) -> Bool {
        SQLText.removingComments(statement)
            .range(of: #"(?is)\bPRAGMA\s+([\w"'`\[\]]+\s*\.\s*)?["'`\[]?(text|hex)?(re)?key\b|\bATTACH\b.*\bKEY\b"#,
                   options: .regularExpression) != nil
    }
}
