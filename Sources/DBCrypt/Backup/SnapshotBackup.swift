/// A backup of an open database: one committed state of it, written to
/// another file with the routines' guarantees (``Export``: a sibling file,
/// flushed, read back and checked, then renamed; progress, cancellation,
/// the free-space check; killed at any instant, the destination holds what
/// it held before or the complete copy).
///
/// The snapshot is read on a connection of its own, opened as the app's
/// connections are (the key derived once, the same settings and locking),
/// in one read transaction: in WAL mode a read snapshot, which writers do
/// not wait for; in rollback-journal mode a shared lock, which keeps every
/// writer's commit waiting until the copy is written.
struct SnapshotBackup {
    /// The database's path.
    var path: String
    /// What opens another connection to it: the key derived once (nil for a
    /// plaintext database), the settings that opened it, and the options.
    var openingKey: DatabaseKey?
    var openingCipher: CipherSettings?
    var openingOptions: Database.Options

    /// What opens another connection as `db` was opened.
    init(of db: Database) {
        self.init(path: db.path, openingKey: db.keyForOtherConnections, openingCipher: db.cipher, openingOptions: db.openingOptions)
    }

    init(path: String, openingKey: DatabaseKey?, openingCipher: CipherSettings?, openingOptions: Database.Options) {
        self.path = path
        self.openingKey = openingKey
        self.openingCipher = openingCipher
        self.openingOptions = openingOptions
    }

    /// Writes the copy to `destination`.
    ///
    /// - throws: ``DatabaseError/misuse(reason:)`` for `cipher` without a key
    ///   of its own, and the errors of ``DatabaseEncryption/decrypt(_:key:cipher:to:options:)``.
    func write(to destination: String, key: BackupKey, cipher: CipherSettings?, options: ExportOptions) throws {
        guard path != ":memory:" && !path.isEmpty else {
            throw DatabaseError.misuse(reason: "an in-memory database has no file to back up: attach a file and use sqlcipher_export")
        }
        let destinationKey: DatabaseKey?
        var destinationCipher = cipher
        switch key {
        case .sameAsDatabase:
            guard cipher == nil else {
                throw DatabaseError.misuse(reason: "a copy with the database's key keeps its settings: to change them, pass key: .using(key)")
            }
            destinationKey = openingKey
        case .using(let newKey):
            guard !newKey.isEmpty else {
                throw CipherError.invalidKey(reason: "it is empty, which SQLCipher would take as no encryption at all")
            }
            destinationKey = newKey
        case .plaintext:
            guard cipher == nil else { throw DatabaseError.misuse(reason: "a plaintext copy has no cipher settings") }
            destinationKey = nil
            destinationCipher = .sqlcipher4  // unused: only a key makes the export apply settings
        }
        var sourceOptions = openingOptions
        // The snapshot's connection attaches the copy, so it is not read-only
        // (a read-only main database would make the attached copy read-only
        // too); it writes nothing to the database.
        sourceOptions.readOnly = false
        sourceOptions.queryOnly = false
        sourceOptions.journalMode = .default
        sourceOptions.tryOtherFormat = false
        sourceOptions.trace = nil
        var export = Export(
            sourcePath: path, sourceKey: openingKey, sourceCipher: openingCipher ?? .sqlcipher4,
            destinationPath: destination, destinationKey: destinationKey,
            destinationCipher: destinationCipher, options: options, inPlace: false)
        export.sourceOptions = sourceOptions
        try export.run()
    }
}

