import ArgumentParser
import DBCrypt

/// `dbcrypt rekey`: a new key, and optionally new cipher settings.
struct Rekey: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change the key (and the cipher settings) of an encrypted database.",
        discussion: """
            The database is re-encrypted into a new file beside it, checked, then renamed over \
            it: killed at any moment, the file opens with the old key or the new one. \
            --format, --page-size and --kdf-iter set the new settings; without them the \
            current ones are kept. --format sqlcipher4 converts a SQLCipher 3 file.

            Example:
              dbcrypt rekey app.db --key-env OLD_KEY --new-key-env NEW_KEY --format sqlcipher4
            """)

    @Argument(help: "The encrypted database.")
    var database: String

    @Flag(help: "Re-key a file that has other names (hard links), which keep the old key.")
    var force = false

    @OptionGroup var key: KeyOptions
    @OptionGroup var newKey: NewKeyOptions
    @OptionGroup(title: "New cipher settings") var cipher: CipherOptions

    func run() throws {
        try reportingErrors {
            if case .plaintext = try requireDatabaseFile(database) { throw DatabaseError.notEncrypted(path: database) }
            let currentKey = try key.key(prompt: "Current key for \(database): ")
            // Refuse a wrong current key before asking for a new one.
            var readOnly = Database.Options()
            readOnly.readOnly = true
            _ = try Database(path: database, key: currentKey, options: readOnly)
            let replacement = try newKey.key(prompt: "New key for \(database): ")
            var options = ExportOptions()
            options.replaceHardLinkedFile = force
            options.progress = ProgressBar.callback(label: "Re-keying", pageSize: cipher.settings.effectivePageSize)
            try DatabaseEncryption.changeKey(
                database, from: currentKey, to: replacement, newCipher: cipher.isGiven ? cipher.settings : nil, options: options)
            print("Changed the key of \(database).")
        }
    }
}
