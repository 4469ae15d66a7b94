import ArgumentParser
import DBCrypt
import DBCryptKeyStore

/// `dbcrypt rekey`: a new key, and optionally new cipher settings.
struct Rekey: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change the key (and the cipher settings) of an encrypted database.",
        discussion: """
            The database is re-encrypted into a new file beside it, checked, then renamed over \
            it: killed at any moment, the file opens with the old key or the new one. \
            --format, --page-size and --kdf-iter describe the file as it is, when it is not \
            in a standard format (as for check); --new-format, --new-page-size and \
            --new-kdf-iter set what is written, and without them the current settings are \
            kept. --new-format sqlcipher4 converts a SQLCipher 3 file.

            Example:
              dbcrypt rekey app.db --key-env OLD_KEY --new-key-env NEW_KEY --new-format sqlcipher4
              dbcrypt rekey odd.db --page-size 8192 --kdf-iter 10000 --key-env OLD_KEY --new-key-env NEW_KEY
            """)

    @Argument(help: "The encrypted database.")
    var database: String

    @Flag(help: "Re-key a file that has other names (hard links), which keep the old key.")
    var force = false

    @OptionGroup var key: KeyOptions
    @OptionGroup var newKey: NewKeyOptions
    @OptionGroup(title: "Cipher settings of the database, if not a standard format") var cipher: CipherOptions
    @OptionGroup(title: "New cipher settings") var newCipher: NewCipherOptions

    func run() throws {
        if case .plaintext = try requireDatabaseFile(database) { throw DatabaseError.notEncrypted(path: database) }
        let currentKey = try key.key(prompt: "Current key for \(database): ")
        // Refuse a wrong current key before asking for a new one, and
        // learn the settings that open the file.
        let opened = try openForReading(database, key: currentKey, options: cipher.databaseOptions())
        let current = opened.cipher ?? cipher.settings
        opened.close()
        if let format = cipher.format, format != current.format {
            // --format describes the file as it is; --new-format sets the one written.
            throw CLIError("\(database) is in the \(current.format.rawValue) format, not \(format.rawValue): to convert it, use --new-format \(format.rawValue).")
        }
        let written = newCipher.settings(current: current)
        let replacement = try newKey.newKey(prompt: "New key for \(database): ")
        var options = ExportOptions()
        options.replaceHardLinkedFile = force
        options.progress = ProgressBar.callback(label: "Re-keying", pageSize: (written ?? current).effectivePageSize)
        try replacement.using(inUse: { $0.mayOpen(database, cipher: written ?? current) }, note: printError) { newKey in
            try DatabaseEncryption.changeKey(database, from: currentKey, cipher: current, to: newKey, newCipher: written, options: options)
        }
        try StandardStreams.say("Changed the key of \(database)\(replacement.madeIn.map { " to a new key kept in \($0.store.name) as \($0.name)" } ?? "").")
    }
}
