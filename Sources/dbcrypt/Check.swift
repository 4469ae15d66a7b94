import ArgumentParser
import DBCrypt
import SQLCipherFormat

/// `dbcrypt check`: does it open, and is it intact?
struct Check: ParsableCommand, DatabaseFileCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check that a database opens with its key and is intact.",
        discussion: """
            On an encrypted database, DBCrypt's own page reader first checks the HMAC of every \
            page of the file (in use, free, or past the end of the b-tree) and of every frame \
            in its -wal file, and names each damaged one: its page number, byte range and what \
            is wrong. Then SQLite's integrity check reads the database through the linked \
            SQLCipher (when it can open the file's settings), and on SQLCipher 4 its own \
            cipher_integrity_check authenticates every page again. A transaction that a stopped \
            process left unfinished is rolled back first (as any SQLite program does when it \
            opens the file to write), and a note says so. \
            Exit status 0: intact; 3: wrong key or not a database; 4: damaged.

            Example:
              dbcrypt check app.db --key-env APP_KEY && echo intact
              dbcrypt check app.db --key-env APP_KEY --json
            """)

    @OptionGroup var file: DatabaseFileOptions

    @Flag(help: "Print the result as JSON, every damaged page listed.")
    var json = false

    func run() throws {
        let format = try requireDatabaseFile(database)
        var options = ExportOptions()
        options.pageReader = EncryptedDatabaseFile.self
        let report = try DatabaseEncryption.check(database, key: key.keyIfNeeded(for: database, format: format), cipher: settings,
                                                  options: options, rolledBack: { noteRolledBack(database) })
        try StandardStreams.say(json ? Self.json(report) : report.description)
        guard report.isIntact else {
            var summary = report.summary
            if report.pages?.isIntact == false { summary = summary.dropLast() + " (listed above)." }
            printError("\(database) is damaged: \(summary)")
            throw ExitCode(ExitStatus.damaged)
        }
    }

    /// The report as JSON, every damaged page listed.
    private static func json(_ report: CheckReport) -> String {
        var facts: [(String, JSONValue)] = [("path", .string(report.path)), ("intact", .bool(report.isIntact))]
        if let pages = report.pages {
            facts.append(("settings", .string(pages.settings.description)))
            facts.append(("pages", .integer(Int64(pages.pageCount))))
            facts.append(("walFrames", .integer(Int64(pages.walFrameCount))))
            facts.append(("authenticated", .bool(pages.authenticated)))
            facts.append(("damagedCount", .integer(Int64(pages.damageCount))))
            facts.append(("damaged", .array(pages.damage.map(json))))
        } else {
            facts.append(("pages", .integer(Int64(report.pageCount))))
        }
        facts.append(("integrityCheck", report.linkedSQLCipherOpens ? .array(report.problems.map(JSONValue.string)) : .null))
        facts.append(("cipherIntegrityCheck", .bool(report.cipherIntegrityCheckRan)))
        return JSONValue.object(facts).encoded
    }

    private static func json(_ damage: PageDamage) -> JSONValue {
        var fields: [(String, JSONValue)] = [("page", damage.page.map { .integer(Int64($0)) } ?? .null)]
        switch damage.location {
        case .database: fields.append(("file", .string("database")))
        case let .wal(frame): fields += [("file", .string("wal")), ("frame", .integer(Int64(frame)))]
        }
        fields += [("offset", .integer(damage.byteRange.lowerBound)), ("length", .integer(Int64(damage.byteRange.count))),
                   ("kind", .string(damage.kind.rawValue))]
        return .object(fields)
    }
}
