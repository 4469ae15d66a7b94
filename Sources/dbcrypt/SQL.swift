import ArgumentParser
import DBCrypt
import Foundation

/// `dbcrypt sql`: run SQL.
struct SQL: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run SQL on a database and print the rows.",
        discussion: """
            Statements separated by semicolons run in order. Rows print as an aligned table, \
            or as JSON (an array of objects per statement; blobs in base64) or CSV (a header \
            line, then one line per row; blobs in base64) on request. The database must \
            exist, unless --create says to make it: encrypted when a key is given, plaintext \
            otherwise. Without SQL, standard input is run as a script, as sqlite3 runs one \
            (dot-commands too; exit status 1 if a statement failed), or on a terminal the \
            shell starts.

            Example:
              dbcrypt sql app.db --key-env APP_KEY "SELECT id, title FROM notes LIMIT 5"
              dbcrypt sql app.db --key-env APP_KEY --csv "SELECT * FROM notes" > notes.csv
            """)

    @Argument(help: "The database.")
    var database: String

    @Argument(help: "The SQL to run; without it, SQL is read from standard input, or the shell starts on a terminal (see dbcrypt shell).")
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

    @OptionGroup var key: KeyOptions
    @OptionGroup(title: "Cipher settings of the database, if not a standard format") var cipher: CipherOptions

    func validate() throws {
        if sql == nil && (json || csv) { throw ValidationError("--json and --csv print the rows of SQL given as an argument: a script sets .mode json or .mode csv.") }
        if json && csv { throw ValidationError("Give --json or --csv, not both.") }
        if let salt, saltBytes(salt) == nil { throw ValidationError("--salt takes 32 hex digits (16 bytes).") }
        if plaintextHeader != nil && !create { throw ValidationError("--plaintext-header makes a new database: give --create too.") }
    }

    func run() throws {
        try reportingErrors {
            let databaseKey = try ShellSession.key(of: database, create: create, from: key)
            var options = cipher.databaseOptions(salt: salt.flatMap(saltBytes))
            if let plaintextHeader { options.cipher.plaintextHeaderSize = plaintextHeader }
            options.create = create
            options.acceptsDamagedWriteAheadLog = acceptWalLoss
            guard let sql else {
                return try ShellSession(database: database, key: databaseKey, keyVariable: key.environment, newKey: nil, cipher: cipher, options: options).run()
            }
            let db = try Database(path: database, key: databaseKey, options: options)
            let output = RowPrinter(style: json ? .json : csv ? .csv : .table)
            try db.closing {
                try namingDamage(of: database) { try db.executeScript(sql) { cursor in try output.print(cursor) } }
            }
        }
    }
}
