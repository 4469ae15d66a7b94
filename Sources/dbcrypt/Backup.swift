import ArgumentParser
import DBCrypt
import DBCryptKeyStore
import Foundation

/// `dbcrypt backup`: a snapshot of a database that may be in use (the
/// default), or every commit of it (`backup continuous`).
struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Back up a database while apps use it: one committed state of it, or every commit.",
        subcommands: [SnapshotBackupCommand.self, ContinuousBackupCommand.self],
        defaultSubcommand: SnapshotBackupCommand.self)
}

/// `dbcrypt backup [snapshot]`: a copy of a database that may be in use.
struct SnapshotBackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Copy a database while apps use it: one committed state of it, encrypted (the default).",
        discussion: """
            The copy holds the database exactly as it was at one commit. In WAL mode it is \
            read from a snapshot and the apps' writes go on; with a rollback journal (SQLite's \
            default) their commits wait until the copy is read (up to their busy timeout). \
            The copy is written beside --output, checked, then renamed into place with mode \
            0600: killed at any moment, --output holds what it held before or the whole copy.

            The copy has the database's key and settings, unless --new-key-* gives it another \
            key (with --new-format, --new-page-size, --new-kdf-iter for other settings), or \
            --plaintext asks for a copy anyone who can read it can read.

            --output may be s3://BUCKET/KEY: the encrypted copy is stored there as one object \
            (never replacing one), with the S3 settings below.

            dbcrypt backup continuous ships every commit to a directory or S3 instead (see its --help; \
            dbcrypt backup DB --continuous ... is the same command).

            Example:
              dbcrypt backup app.db -o /mnt/backup/app.db --key-env APP_KEY
              dbcrypt backup app.db -o offsite.db --key-env APP_KEY --new-key-file offsite.key
              dbcrypt backup continuous app.db -o /mnt/backup/app --key-env APP_KEY
            """)

    @Argument(help: "The database to copy.")
    var database: String

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("Where to write the copy.", valueName: "PATH"))
    var output: String

    @Flag(help: "Replace --output if it exists.")
    var force = false

    @Flag(help: "Write a plaintext copy, without encryption.")
    var plaintext = false

    @OptionGroup(title: "S3 storage") var storage: StorageOptions
    @OptionGroup var key: KeyOptions
    @OptionGroup var newKey: NewKeyOptions
    @OptionGroup(title: "Cipher settings of the database, if not a standard format") var cipher: CipherOptions
    @OptionGroup(title: "Cipher settings of a copy with another key") var newCipher: NewCipherOptions

    func validate() throws {
        if plaintext && newKey.isGiven {
            throw ValidationError("--plaintext writes a copy without a key: give it or a --new-key-* option, not both.")
        }
        if output.hasPrefix("s3://") {
            guard output.dropFirst(5).contains("/"), !output.hasSuffix("/") else { throw ValidationError("-o s3://BUCKET/KEY names an object: give its key after the bucket.") }
            if plaintext || force { throw ValidationError("An S3 copy is always encrypted and never replaces an object: leave out \(plaintext ? "--plaintext" : "--force").") }
        }
        if newCipher.isGiven && !newKey.isGiven {
            throw ValidationError("--new-format, --new-page-size and --new-kdf-iter set the settings of a copy with another key: give it with --new-key-env, --new-key-file or a --new-key key store.")
        }
    }

    func run() throws {
        let format = try requireDatabaseFile(database)
        if case .plaintext = format, key.isGiven { throw DatabaseError.notEncrypted(path: database) }
        let databaseKey = try key.keyIfNeeded(for: database, format: format)
        var openOptions = cipher.databaseOptions()
        openOptions.readOnly = access(database, W_OK) != 0
        let queue = try DatabaseQueue(path: database, key: databaseKey, options: openOptions)
        defer { try? queue.closeWithoutCheckpoint() }
        let current = try queue.inDatabase { $0.cipher }
        var options = ExportOptions()
        options.replaceExisting = force
        let written = current.flatMap { newCipher.settings(current: $0) }
        options.progress = ProgressBar.callback(label: "Backing up", pageSize: (written ?? current ?? .sqlcipher4).effectivePageSize)
        let copyCipher = newCipher.settings(current: current ?? .sqlcipher4)
        let replacement = newKey.isGiven ? try newKey.newKey(prompt: "Key for the copy \(output): ") : nil
        let encryption: BackupEncryption = if let replacement { .using(replacement.key) } else if plaintext { .plaintext } else { .sameAsDatabase }
        let backUp = {
            guard output.hasPrefix("s3://") else { return try queue.backup(to: output, key: encryption, cipher: copyCipher, options: options) }
            let slash = output.lastIndex(of: "/")!
            try queue.backup(to: try storage.storage(String(output[..<slash])), named: String(output[output.index(after: slash)...]),
                             key: encryption, cipher: copyCipher, options: options)
        }
        if let replacement {
            try replacement.using(inUse: { $0.mayOpen(output, cipher: copyCipher ?? current ?? .sqlcipher4) }, note: printError) { _ in try backUp() }
        } else {
            try backUp()
        }
        let how = if plaintext { ", in plaintext" }
            else if let made = replacement?.madeIn { ", under a new key kept in \(made.store.name) as \(made.name)" }
            else if replacement != nil { "" }
            else { current == nil ? ", in plaintext as it is" : " under its own key" }
        try StandardStreams.say("Backed up \(database) to \(output)\(how).")
    }
}
