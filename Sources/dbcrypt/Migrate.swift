import ArgumentParser
import DBCrypt

/// `dbcrypt migrate`: plaintext to encrypted.
struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Encrypt a plaintext SQLite database.",
        discussion: """
            Without --output the database is encrypted in place, atomically: killed at any \
            moment, the file holds the plaintext original or the complete encrypted database. \
            New files are in the SQLCipher 4 format unless --format sqlcipher3 says otherwise.

            Example:
              APP_KEY='correct horse battery staple' dbcrypt migrate app.db --key-env APP_KEY
              dbcrypt migrate app.db -o app-encrypted.db --key-file app.key --format sqlcipher3
            """)

    @Argument(help: "The plaintext database.")
    var database: String

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("Write the encrypted database here instead.", valueName: "PATH"))
    var output: String?

    @Flag(help: "Replace --output if it exists; in place, replace a file that has other names (hard links), which keep the plaintext.")
    var force = false

    @OptionGroup var key: KeyOptions
    @OptionGroup var cipher: CipherOptions

    func run() throws {
        try reportingErrors {
            guard case .plaintext = try requireDatabaseFile(database) else {
                throw DatabaseError.sourceNotPlaintext(path: database)
            }
            let newKey = try key.key(prompt: "New key for \(database): ", confirm: true)
            var options = ExportOptions()
            options.replaceExisting = force
            options.replaceHardLinkedFile = force
            options.progress = ProgressBar.callback(label: "Encrypting", pageSize: cipher.settings.effectivePageSize)
            if let output {
                try DatabaseEncryption.encrypt(database, to: output, key: newKey, cipher: cipher.settings, options: options)
                try StandardStreams.print("Encrypted \(database) to \(output) (\(cipher.settings)).")
            } else {
                try DatabaseEncryption.migrateInPlace(database, key: newKey, cipher: cipher.settings, options: options)
                try StandardStreams.print("Encrypted \(database) in place (\(cipher.settings)).")
            }
        }
    }
}
