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
            otherwise.

            Example:
              dbcrypt sql app.db --key-env APP_KEY "SELECT id, title FROM notes LIMIT 5"
              dbcrypt sql app.db --key-env APP_KEY --csv "SELECT * FROM notes" > notes.csv
            """)

    @Argument(help: "The database.")
    var database: String

    @Argument(help: "The SQL to run.")
    var sql: String

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
        if json && csv { throw ValidationError("Give --json or --csv, not both.") }
        if let salt, saltBytes(salt) == nil { throw ValidationError("--salt takes 32 hex digits (16 bytes).") }
        if plaintextHeader != nil && !create { throw ValidationError("--plaintext-header makes a new database: give --create too.") }
    }

    func run() throws {
        try reportingErrors {
            let format: FileFormat
            do {
                format = try create ? FileFormat.detect(at: database) : requireDatabaseFile(database)
            } catch DatabaseError.fileNotFound {
                throw CLIError(missingDatabaseSentence(database, createOption: "--create"))
            }
            let databaseKey = try key.keyIfNeeded(for: database, format: format)
            var options = cipher.databaseOptions(salt: salt.flatMap(saltBytes))
            if let plaintextHeader { options.cipher.plaintextHeaderSize = plaintextHeader }
            options.create = create
            options.acceptsDamagedWriteAheadLog = acceptWalLoss
            let db = try Database(path: database, key: databaseKey, options: options)
            let output = RowPrinter(style: json ? .json : csv ? .csv : .table)
            try db.closing {
                try namingDamage(of: database) { try db.executeScript(sql) { cursor in try output.print(cursor) } }
            }
        }
    }
}
