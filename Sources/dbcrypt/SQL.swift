import ArgumentParser
import DBCrypt
import DBCryptShell
import Foundation

/// `dbcrypt sql`, also spelled `dbcrypt shell`: SQL given as an argument,
/// a script from standard input, or an interactive shell on a terminal.
struct SQL: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run SQL on a database: the SQL given, a script from standard input, or an interactive shell.",
        discussion: """
            The key is checked before anything runs: a wrong key is exit status 3. The \
            database must exist, unless --create says to make it: encrypted when a key is \
            given, plaintext otherwise.

            SQL given as an argument runs statement by statement; the rows print in columns \
            under their names, or as JSON or CSV on request, as the sqlite3 shell prints them \
            in those modes; on a terminal, control characters print as ^[ (to a file or a \
            pipe, as they are). Without SQL, standard input is run as a script, as sqlite3 runs \
            one: dot-commands too (.help lists them), rows in list mode, exit status 1 if any \
            statement failed. On a terminal the shell starts: line editing, Tab completion, \
            Ctrl-C stops a statement; a statement runs when it ends with ';'. Nothing typed \
            is written anywhere, unless --history keeps it sealed.

            Example:
              dbcrypt sql app.db --key-env APP_KEY "SELECT id, title FROM notes LIMIT 5"
              dbcrypt sql app.db --key-env APP_KEY --csv "SELECT * FROM notes" > notes.csv
              dbcrypt shell app.db --key-env APP_KEY
              dbcrypt shell app.db --key-env APP_KEY < report.sql
            """,
        aliases: ["shell"])

    @Argument(help: "The database.")
    var database: String

    @Argument(help: "The SQL to run; without it, SQL is read from standard input, or the shell starts on a terminal.")
    var sql: String?

    @Flag(help: "Print rows as JSON.")
    var json = false

    @Flag(help: "Print rows as CSV.")
    var csv = false

    @Flag(help: "Create the database if it does not exist.")
    var create = false

    @Flag(help: "Open a database whose write-ahead log is damaged, reading the log up to the damage: the next checkpoint drops the committed transactions after it for good.")
    var acceptWalLoss = false

    @Option(help: ArgumentHelp("The salt of a database with a plaintext header (an iOS app's), as 32 hex digits, "
                               + "when the key is a passphrase (a raw key x'<96 hex digits>' carries it).", valueName: "HEX"))
    var salt: String?

    @Option(name: .customLong("plaintext-header"),
            help: ArgumentHelp("With --create: make the new database with this many bytes in the clear (iOS: 32; SQLCipher 4), "
                               + "its salt given with --salt or in the raw key.", valueName: "BYTES"))
    var plaintextHeader: Int?

    @Flag(help: ArgumentHelp("In the shell, keep the statements typed, sealed under a key derived from the database's, "
                             + "in $XDG_STATE_HOME/dbcrypt/history (statements holding a key are never kept)."))
    var history = false

    @OptionGroup var key: KeyOptions
    @OptionGroup(title: "The new key of the shell's .rekey (else it asks twice)") var newKey: NewKeyOptions
    @OptionGroup(title: "Cipher settings of the database, if not a standard format") var cipher: CipherOptions

    func validate() throws {
        if sql == nil && (json || csv) { throw ValidationError("--json and --csv print the rows of SQL given as an argument: a script sets .mode json or .mode csv.") }
        if sql != nil && (history || newKey.isGiven) { throw ValidationError("--history and the --new-key options are the shell's: give no SQL.") }
        if json && csv { throw ValidationError("Give --json or --csv, not both.") }
        if let salt, saltBytes(salt) == nil { throw ValidationError("--salt takes 32 hex digits (16 bytes).") }
        if plaintextHeader != nil && !create { throw ValidationError("--plaintext-header makes a new database: give --create too.") }
    }

    func run() throws {
        let databaseKey = try ShellSession.key(of: database, create: create, from: key)
        var options = cipher.databaseOptions(salt: salt.flatMap(saltBytes))
        if let plaintextHeader { options.cipher.plaintextHeaderSize = plaintextHeader }
        options.create = create
        options.acceptsDamagedWriteAheadLog = acceptWalLoss
        guard let sql else {
            return try ShellSession(database: database, key: databaseKey, keyVariable: key.environment, newKey: newKey, cipher: cipher, options: options,
                                    keepsHistory: history).run()
        }
        let db = try Database(path: database, key: databaseKey, options: options)
        try db.closing {
            try namingDamage(of: database) {
                // On a terminal, what the database holds cannot drive it; to a file or a pipe, the data as it is.
                let printer = try ResultPrinter(mode: json ? .json : csv ? .csv : .column, headers: true, exactReals: true,
                                                escape: isatty(STDOUT_FILENO) == 1 ? .ascii : .off, reading: db)
                try db.executeScript(sql) { cursor in try printer.print(cursor) { try StandardStreams.write(Data($0)) } }
            }
        }
    }
}

/// The shell on a database (``Shell/runSession(on:path:key:options:keepsHistory:host:)``),
/// with what it asks of the command line: `.cipher`'s report, `.rekey`'s new key and routine.
struct ShellSession {
    let database: String
    let key: DatabaseKey?
    /// The variable `--key-env` named, if any: kept from the pager.
    var keyVariable: String?
    let newKey: NewKeyOptions
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
        return try source.keyIfNeeded(for: database, format: format, creates: create)
    }

    func run() throws {
        let queue = try DatabaseQueue(path: database, key: key, options: options)
        if try Shell.runSession(on: queue, path: database, key: key, options: options, keepsHistory: keepsHistory, host: host) {
            throw ExitCode.failure
        }
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
            newKey: { inUse, body in
                // A key store holding no key yet gets a new random one, removed again when the work fails.
                try newKey.newKey(prompt: "New key for \(database): ").using(inUse: inUse, note: printError, body)
            },
            changeKey: { current, settings, replacement in
                try DatabaseEncryption.changeKey(database, from: current, cipher: settings, to: replacement)
            },
            note: printError,
            secretVariables: Set([keyVariable, newKey.environment].compactMap { $0 }))
    }
}
