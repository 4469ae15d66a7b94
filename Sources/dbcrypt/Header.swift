import ArgumentParser
import DBCrypt
import SQLCipherFormat

/// `dbcrypt header`: a plaintext header for an iOS app's shared database, and back.
struct Header: ParsableCommand, DatabaseFileCommand {
    static let configuration = CommandConfiguration(
        abstract: "Give an encrypted database a plaintext header (for iOS apps), or the standard layout back.",
        discussion: """
            An iOS app that shares a WAL database with an app extension must keep the first \
            32 bytes of the file in the clear (the SQLite header), or the system kills it \
            (0xdead10cc). With --plaintext-header 32, page 1 is encrypted again from byte 32 \
            on and its first 32 bytes written in the clear; the key stays the same, but the \
            salt is no longer in the file: dbcrypt prints it, and SQLCipher opens the file with \
            PRAGMA cipher_plaintext_header_size = 32 and PRAGMA cipher_salt = "x'<salt>'". \
            --plaintext-header 0 puts the salt back in front (give the salt with --salt). \
            The new file is written beside the database (or --output), checked, then renamed \
            into place. Close every program that has the database open first.

            Example:
              dbcrypt header app.db --plaintext-header 32 --key-env APP_KEY
              dbcrypt header app.db --plaintext-header 0 --salt 00112233445566778899aabbccddeeff --key-env APP_KEY
            """)

    @OptionGroup var file: DatabaseFileOptions

    @Option(help: ArgumentHelp("Bytes of page 1 to keep in the clear: a multiple of 16 up to 96 (iOS: 32), or 0 for the standard layout.",
                               valueName: "BYTES"))
    var plaintextHeader: Int

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("Write the converted copy here instead of replacing the database.", valueName: "PATH"))
    var output: String?

    @Flag(help: "Replace --output if it exists; replace a database with other hard links.")
    var force = false

    func run() throws {
        _ = try requireDatabaseFile(database)
        let databaseKey = try key.key(prompt: "Key for \(database): ")
        var options = ExportOptions()
        options.replaceExisting = force
        options.replaceHardLinkedFile = force
        options.pageReader = EncryptedDatabaseFile.self
        guard let salt = try DatabaseEncryption.convertHeader(database, key: databaseKey, cipher: settings, plaintextHeaderSize: plaintextHeader,
                                                              to: output, options: options).map({ Hex.encode($0) }) else {
            let layout = plaintextHeader == 0 ? "the standard layout" : "a \(plaintextHeader)-byte plaintext header"
            return try StandardStreams.say("\(database) already has \(layout): nothing to do.")
        }
        let destination = output ?? database
        if plaintextHeader == 0 {
            try StandardStreams.say("\(destination) has the standard layout again: its salt is in its first 16 bytes, and it opens with its key alone.")
        } else {
            try StandardStreams.say("""
                \(destination) keeps its first \(plaintextHeader) bytes in the clear. Its salt is no longer in the file: keep it.
                salt: \(salt)
                SQLCipher 4 opens it with PRAGMA cipher_plaintext_header_size = \(plaintextHeader) and PRAGMA cipher_salt = "x'\(salt)'".
                """)
        }
    }
}
