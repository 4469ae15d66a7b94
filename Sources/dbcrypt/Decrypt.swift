import ArgumentParser
import DBCrypt
import SQLCipherFormat

/// `dbcrypt decrypt`: encrypted to plaintext.
struct Decrypt: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export an encrypted database to a plaintext one.",
        discussion: """
            The plaintext copy is written beside --output, checked, then renamed into place \
            with mode 0600. The encrypted database is not changed. A file the linked SQLCipher \
            cannot open (SQLCipher 1 or 2 settings, other hashes, a plaintext header: give \
            --salt) is decrypted by DBCrypt's own page reader instead, which says so; every \
            page must authenticate (see dbcrypt recover for a damaged file).

            Example:
              dbcrypt decrypt app.db -o app-plain.db --key-env APP_KEY
            """)

    @Argument(help: "The encrypted database.")
    var database: String

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("Where to write the plaintext database.", valueName: "PATH"))
    var output: String

    @Flag(help: "Replace --output if it exists.")
    var force = false

    @OptionGroup var key: KeyOptions
    @OptionGroup(title: "Cipher settings of the database, if not a standard format") var cipher: CipherOptions
    @OptionGroup(title: "Settings only DBCrypt's page reader reads") var pageFormat: PageFormatOptions

    func run() throws {
        try reportingErrors {
            if case .plaintext = try requireDatabaseFile(database), !pageFormat.isGiven {
                throw DatabaseError.notEncrypted(path: database)
            }
            let databaseKey = try key.key(prompt: "Key for \(database): ")
            var options = ExportOptions()
            options.replaceExisting = force
            var linkedError: DatabaseError?
            // The linked SQLCipher first, unless only the page reader knows the settings.
            if !pageFormat.needsPageReader {
                do {
                    options.progress = ProgressBar.callback(label: "Decrypting", pageSize: 4096)
                    let settings = pageFormat.databaseOptions(cipher).cipher
                    try DatabaseEncryption.decrypt(database, key: databaseKey, cipher: settings, to: output, options: options)
                    try StandardStreams.say("Decrypted \(database) to \(output).")
                    return
                } catch where (error as? DatabaseError)?.resultCode == 26 || Check.onlyThePageReaderOpens(error) {
                    // Perhaps settings the linked SQLCipher does not read: the
                    // page reader says. Its wrong key is the linked one's.
                    linkedError = (error as? DatabaseError).flatMap { $0.resultCode == 26 ? $0 : nil }
                }
            }
            let file: EncryptedDatabaseFile
            do {
                file = try pageFormat.open(database, key: databaseKey, cipher: cipher)
            } catch DatabaseError.wrongKeyOrNotADatabase where linkedError != nil {
                throw linkedError!
            }
            let bar = ProgressBar.callback(label: "Decrypting", pageSize: file.settings.effectivePageSize)
            try DatabaseEncryption.replaceFile(at: output, source: database, options: options, write: { newFile in
                _ = try file.decrypt(to: newFile, progress: bar)
            }, check: checkPlaintext)
            printError("note: the linked SQLCipher cannot open \(database) (\(file.settings)); DBCrypt's page reader decrypted it.")
            try StandardStreams.say("Decrypted \(database) to \(output).")
        }
    }
}

/// Opens a plaintext file the page reader wrote and runs SQLite's integrity check on it.
///
/// - throws: ``DatabaseError/verificationFailed(path:reason:)`` when SQLite finds a problem.
func checkPlaintext(_ path: String) throws {
    var options = Database.Options()
    options.readOnly = true
    options.create = false
    let db = try Database(path: path, key: nil, options: options)
    defer { db.close() }
    let problems = try db.integrityProblems()
    guard problems.isEmpty else {
        throw DatabaseError.verificationFailed(path: path, reason: problems.prefix(3).joined(separator: "; "))
    }
}
