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
        try reportingErrors {
            let format = try requireDatabaseFile(database)
            let databaseKey = try key.keyIfNeeded(for: database, format: format)
            var result = CheckResult(path: database)
            if let databaseKey, format == .notPlaintext || pageFormat.isGiven {
                let file = try pageFormat.open(database, key: databaseKey, cipher: cipher)
                result.pages = try file.verify()
            }
            if result.pages?.isIntact ?? true {
                try checkThroughSQLite(databaseKey, into: &result)
            }
            try StandardStreams.say(json ? result.json : result.text)
            guard result.isIntact else {
                printError("\(database) is damaged: \(result.summary)")
                throw ExitCode(ExitStatus.damaged)
            }
        }
    }

    /// SQLite's integrity check through the linked SQLCipher, which reads every page in use.
    private func checkThroughSQLite(_ databaseKey: DatabaseKey?, into result: inout CheckResult) throws {
        let db: Database
        do {
            db = try openForReading(database, key: databaseKey, options: pageFormat.databaseOptions(cipher))
        } catch where result.pages != nil && PageReaderFallback.isFor(error) {
            result.linkedSQLCipherOpens = false
            return
        }
        defer { db.close() }
        result.kind = db.cipher.map { "encrypted, \($0)" } ?? "plaintext"
        do {
            result.pageCount = try db.fetchScalar(Int.self, "PRAGMA page_count") ?? 0
            result.problems = try db.integrityProblems()
            if db.cipher != nil, try CipherInfo.linked().hasCipherIntegrityCheck {
                // SQLCipher 4.x authenticates every page itself, beside the page reader.
                let failed = try db.fetchAll(String.self, "PRAGMA cipher_integrity_check")
                result.problems += failed.map { "SQLCipher: \($0)" }
                result.cipherIntegrityCheckRan = true
            }
        } catch let error as DatabaseError where error.category == .damaged {
            result.problems = [error.description]
        }
    }
}

/// What `check` found, printed as text or JSON.
struct CheckResult {
    let path: String
    /// The page reader's report, for an encrypted file.
    var pages: VerificationReport?
    /// Whether the linked SQLCipher could open the file for SQLite's integrity check.
    var linkedSQLCipherOpens = true
    /// "plaintext", or "encrypted, <settings>" as the linked SQLCipher opened it.
    var kind: String?
    /// Pages SQLite counts.
    var pageCount = 0
    /// What SQLite's integrity check (and SQLCipher's) reported other than "ok".
    var problems: [String] = []
    /// Whether SQLCipher's own `cipher_integrity_check` ran (SQLCipher 4.x).
    var cipherIntegrityCheckRan = false

    var isIntact: Bool { (pages?.isIntact ?? true) && problems.isEmpty }

    /// One sentence for stderr.
    var summary: String {
        if let pages, !pages.isIntact {
            return "\(pages.damageCount) page(s) or frame(s) do not authenticate (listed above)."
        }
        return problems.prefix(5).joined(separator: "; ")
    }

    var text: String {
        guard isIntact else {
            guard let pages else { return "" }
            var lines = pages.damage.map(\.description)
            if pages.damageCount > pages.damage.count { lines.append("and \(pages.damageCount - pages.damage.count) more") }
            return lines.joined(separator: "\n")
        }
        guard let pages else { return "ok: \(path) opens (\(kind ?? "plaintext")) and all \(pageCount) pages are intact." }
        let frames = pages.walFrameCount > 0 ? " and its \(pages.walFrameCount) WAL frames" : ""
        let sqlite = !linkedSQLCipherOpens ? "the linked SQLCipher cannot open these settings, so SQLite's integrity check did not run"
            : cipherIntegrityCheckRan ? "SQLite's integrity check and SQLCipher's cipher_integrity_check passed"
            : "SQLite's integrity check passed"
        guard pages.authenticated else {
            // Nothing vouches for pages without an HMAC: they are not called intact.
            return "ok: \(path) (\(pages.settings)): all \(pages.pageCount) pages\(frames) decrypt (\(sqlite)),"
                + " but SQLCipher 1 pages carry no HMAC, so whether they were altered cannot be verified."
        }
        return "ok: \(path) (\(pages.settings)): all \(pages.pageCount) pages\(frames) are intact (every page's HMAC verified; \(sqlite))."
    }

    var json: String {
        var facts: [(String, JSONValue)] = [("path", .string(path)), ("intact", .bool(isIntact))]
        if let pages {
            facts.append(("settings", .string(pages.settings.description)))
            facts.append(("pages", .integer(Int64(pages.pageCount))))
            facts.append(("walFrames", .integer(Int64(pages.walFrameCount))))
            facts.append(("authenticated", .bool(pages.authenticated)))
            facts.append(("damagedCount", .integer(Int64(pages.damageCount))))
            facts.append(("damaged", .array(pages.damage.map(Self.json))))
        } else {
            facts.append(("pages", .integer(Int64(pageCount))))
        }
        facts.append(("integrityCheck", linkedSQLCipherOpens ? .array(problems.map(JSONValue.string)) : .null))
        facts.append(("cipherIntegrityCheck", .bool(cipherIntegrityCheckRan)))
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
