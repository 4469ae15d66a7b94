import ArgumentParser
import DBCrypt

/// `dbcrypt decrypt`: encrypted to plaintext.
struct Decrypt: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export an encrypted database to a plaintext one.",
        discussion: """
            The plaintext copy is written beside --output, checked, then renamed into place \
            with mode 0600. The encrypted database is not changed.

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

    func run() throws {
        try reportingErrors {
            if case .plaintext = try requireDatabaseFile(database) { throw DatabaseError.notEncrypted(path: database) }
            let databaseKey = try key.key(prompt: "Key for \(database): ")
            var options = ExportOptions()
            options.replaceExisting = force
            options.progress = ProgressBar.callback(label: "Decrypting", pageSize: 4096)
            try DatabaseEncryption.decrypt(database, key: databaseKey, cipher: cipher.settings, to: output, options: options)
            print("Decrypted \(database) to \(output).")
        }
    }
}
