import ArgumentParser
import DBCrypt
import DBCryptShell
import Foundation

/// `dbcrypt shell`: an interactive SQL session.
struct ShellCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "Run SQL and dot-commands on a database, interactively or from standard input.",
        discussion: """
            The key is checked before the first prompt: a wrong key ends the shell with status \
            3. A statement runs when it ends with ';'; lines starting with '.' are the sqlite3 \
            shell's dot-commands (.help lists them). Nothing typed is written anywhere. With \
            standard input not a terminal, its lines are run as a script, and the exit status \
            is 1 if any statement failed, as with sqlite3.

            Example:
              dbcrypt shell app.db --key-env APP_KEY
              dbcrypt shell app.db --key-env APP_KEY < report.sql
            """)

    @Argument(help: "The database.")
    var database: String

    @Flag(help: "Create the database if it does not exist.")
    var create = false

    @Flag(help: ArgumentHelp("Keep the statements typed, sealed under a key derived from the database's, "
                             + "in $XDG_STATE_HOME/dbcrypt/history (statements holding a key are never kept)."))
    var history = false

    @OptionGroup var key: KeyOptions
    @OptionGroup(title: "The new key of .rekey (else it asks twice)") var newKey: NewKeyOptions
    @OptionGroup(title: "Cipher settings of the database, if not a standard format") var cipher: CipherOptions

    func run() throws {
        try reportingErrors {
            var options = cipher.databaseOptions()
            options.create = create
            let databaseKey = try ShellSession.key(of: database, create: create, from: key)
            try ShellSession(database: database, key: databaseKey, keyVariable: key.environment, newKey: newKey, cipher: cipher, options: options,
                             keepsHistory: history).run()
        }
    }
}

/// Opens the database and runs a ``Shell`` on it: from a terminal, a
/// prompt per line; otherwise the lines of standard input as a script.
struct ShellSession {
    let database: String
    let key: DatabaseKey?
    /// The variable `--key-env` named, if any: kept from the pager.
    var keyVariable: String?
    let newKey: NewKeyOptions?
    let cipher: CipherOptions
    let options: Database.Options
    var keepsHistory = false

    /// The key of `database` from `source`, asked for on the terminal
    /// when none is given and the file is encrypted; nil for a plaintext
    /// file (or a missing one, with `create`).
    static func key(of database: String, create: Bool, from source: KeyOptions) throws -> DatabaseKey? {
        let format: FileFormat
        do {
            format = try create ? FileFormat.detect(at: database) : requireDatabaseFile(database)
        } catch DatabaseError.fileNotFound {
            throw CLIError(missingDatabaseSentence(database, createOption: "--create"))
        }
        return try source.keyIfNeeded(for: database, format: format)
    }

    func run() throws {
        let databaseKey = key
        let queue = try DatabaseQueue(path: database, key: databaseKey, options: options)
        let interactive = isatty(STDIN_FILENO) == 1
        let shell = try Shell(queue: queue, path: database, key: databaseKey, options: options, interactive: interactive, host: host)
        if interactive {
            let history = try keepsHistory && databaseKey != nil
                ? ShellHistory.sealed(for: database, key: databaseKey!, note: printError) : ShellHistory.inMemory()
            if keepsHistory && databaseKey == nil { printError("\(database) is plaintext: the history is kept for this session only.") }
            shell.runInteractive(history: history)
        } else {
            try shell.runScript(from: STDIN_FILENO)
        }
        try shell.close()
        if shell.hadError && (!interactive || shell.stoppedByError) { throw ExitCode.failure }
    }

    private var host: Shell.Host {
        Shell.Host(
            cipherReport: { databaseKey in
                let format = try requireDatabaseFile(database)
                var facts = try Info.outsideFacts(of: database, format: format)
                let described = try DatabaseEncryption.describe(database, key: databaseKey, cipher: cipher.settings)
                facts += described.facts.map { ($0.name, JSONValue($0.value)) }
                return Info.render(facts, json: false)
            },
            newKey: { try (newKey ?? NewKeyOptions()).key(prompt: "New key for \(database): ", confirm: true) },
            changeKey: { current, replacement in
                let opened = try openForReading(database, key: current, options: options)
                let settings = opened.cipher ?? cipher.settings
                opened.close()
                try DatabaseEncryption.changeKey(database, from: current, cipher: settings, to: replacement)
            },
            note: printError,
            secretVariables: Set([keyVariable, newKey?.environment].compactMap { $0 }))
    }
}
