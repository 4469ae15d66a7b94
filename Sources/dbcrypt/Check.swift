import ArgumentParser
import DBCrypt

/// `dbcrypt check`: does it open, and is it intact?
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check that a database opens with its key and is intact.",
        discussion: """
            Opens the database read-only and runs SQLite's integrity check, which reads every \
            page in use; on an encrypted database each page's HMAC is verified as it is read. \
            A transaction that a stopped process left unfinished is rolled back first (as any \
            SQLite program does when it opens the file to write), and a note says so. \
            Exit status 0: intact; 3: wrong key or not a database; 4: damaged.

            Example:
              dbcrypt check app.db --key-env APP_KEY && echo intact
            """)

    @Argument(help: "The database.")
    var database: String

    @OptionGroup var key: KeyOptions
    @OptionGroup(title: "Cipher settings of the database, if not a standard format") var cipher: CipherOptions

    func run() throws {
        try reportingErrors {
            let format = try requireDatabaseFile(database)
            let databaseKey = try key.keyIfNeeded(for: database, format: format)
            let problems: [String]
            var pages = 0
            // A file SQLite finds malformed at open is DatabaseError.damaged: exit 4.
            let db = try openForReading(database, key: databaseKey, options: cipher.databaseOptions())
            do {
                pages = try db.fetchScalar(Int.self, "PRAGMA page_count") ?? 0
                problems = try db.fetchAll(String.self, "PRAGMA integrity_check").filter { $0 != "ok" }
            } catch let error as DatabaseError where isDamage(error) {
                problems = [error.description]
            }
            guard problems.isEmpty else {
                printError("\(database) is damaged: " + problems.prefix(5).joined(separator: "; "))
                throw ExitCode(ExitStatus.damaged)
            }
            let kind = db.cipher.map { "encrypted, \($0)" } ?? "plaintext"
            print("ok: \(database) opens (\(kind)) and all \(pages) pages are intact.")
        }
    }
}
