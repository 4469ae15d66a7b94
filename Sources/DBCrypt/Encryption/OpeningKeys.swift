// The keys one opening of a file tries, each derived once.

/// The key a connection opens a file with under each settings tried: a
/// passphrase derived once per format, exactly as SQLCipher would, as a raw
/// key with the file's salt, so that SQLCipher derives nothing and every
/// further connection (a pool's readers, its checkpointer) opens at no
/// derivation cost. A wrong passphrase costs one derivation per format tried.
struct OpeningKeys {
    /// The key the caller gave.
    let given: DatabaseKey
    let path: String
    private var derived: [CipherSettings.Format: DatabaseKey] = [:]
    /// The file's salt as read before SQLite opened the file (`.some(nil)`:
    /// it has none), read once: every format tried keeps the plaintext
    /// header and salt settings, so every format derives from it.
    private var salt: [UInt8]??

    init(_ given: DatabaseKey, path: String) {
        self.given = given
        self.path = path
    }

    /// The key for the existing file at ``path`` under `settings`: derived
    /// from the file's salt (or a plaintext header's), or the given key when
    /// it is raw or no salt can be read.
    mutating func existing(_ settings: CipherSettings) -> DatabaseKey {
        if let known = derived[settings.format] { return known }
        let fileSalt = salt ?? settings.fileSalt(path, key: given)
        salt = .some(fileSalt)
        let made = fileSalt.flatMap { given.derived(salt: $0, settings) } ?? given
        derived[settings.format] = made
        return made
    }

    /// Whether the file's salt is no longer the one a key was derived from:
    /// another program replaced the file (a key change, a migration) between
    /// the read and the open. Then the keys are forgotten, to be derived again.
    mutating func forgetIfTheSaltChanged(_ settings: CipherSettings) -> Bool {
        guard let used = salt, settings.fileSalt(path, key: given) != used else { return false }
        derived = [:]
        salt = nil
        return true
    }

    /// The key for a new file under `settings`: derived with a fresh salt
    /// (or the settings' own), which the new file gets; the given key when
    /// it is raw.
    func new(_ settings: CipherSettings) -> DatabaseKey {
        given.derivedForNewFile(settings) ?? given
    }
}

/// The salt at the start of an encrypted file.
enum FileSalt {
    /// The first 16 bytes of the file at `path` when it is an encrypted
    /// database with its salt in front (not plaintext, not empty, not
    /// missing, no plaintext header); nil otherwise.
    static func read(_ path: String) -> [UInt8]? {
        guard let bytes = try? FileReader.start(of: path, count: 16), bytes.count == 16, bytes != SQLiteHeader.magic else { return nil }
        return bytes
    }
}
