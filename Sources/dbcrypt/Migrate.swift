import ArgumentParser
import DBCrypt
import DBCryptKeyStore

/// `dbcrypt migrate`: plaintext to encrypted.
struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Encrypt a plaintext SQLite database.",
        discussion: """
            Without --output the database is encrypted in place, atomically: killed at any \
            moment, the file holds the plaintext original or the complete encrypted database. \
            New files are in the SQLCipher 4 format unless --format sqlcipher3 says otherwise.

            With --key-keyring, --key-kernel-keyring or --key-credential, the key kept there \
            is used; a keyring that holds none gets a new random key, made and kept in one \
            step, and removed again if the migration fails.

            Example:
              APP_KEY='correct horse battery staple' dbcrypt migrate app.db --key-env APP_KEY
              dbcrypt migrate app.db --key-keyring dbcrypt/app
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
        guard case .plaintext = try requireDatabaseFile(database) else {
            throw DatabaseError.sourceNotPlaintext(path: database)
        }
        let newKey = try key.newKey(prompt: "New key for \(database): ")
        var options = ExportOptions()
        options.replaceExisting = force
        options.replaceHardLinkedFile = force
        options.progress = ProgressBar.callback(label: "Encrypting", pageSize: cipher.settings.effectivePageSize)
        // A failure after the encrypted file was put in place (its
        // directory's fsync, say) keeps the key it is encrypted with.
        try newKey.using(inUse: { $0.mayOpen(output ?? database, cipher: cipher.settings) }, note: printError) { key in
            if let output {
                try DatabaseEncryption.encrypt(database, to: output, key: key, cipher: cipher.settings, options: options)
            } else {
                try DatabaseEncryption.migrateInPlace(database, key: key, cipher: cipher.settings, options: options)
            }
        }
        let keptIn = newKey.madeIn.map { ", under a new key kept in \($0.store.name) as \($0.name)" } ?? ""
        try StandardStreams.say("Encrypted \(database) \(output.map { "to \($0)" } ?? "in place") (\(cipher.settings))\(keptIn).")
    }
}
