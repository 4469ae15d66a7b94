import ArgumentParser
import DBCrypt
import Foundation
import SQLCipherFormat

/// `dbcrypt info`: what a database file is.
struct Info: ParsableCommand, DatabaseFileCommand {
    static let configuration = CommandConfiguration(
        abstract: "Describe a database: format, cipher settings, pages, tables, user_version.",
        discussion: """
            Without a key (and no terminal to ask on), an encrypted file is described from \
            the outside only: its size, and that it is encrypted or not a database.

            Example:
              dbcrypt info app.db --key-env APP_KEY --json
            """)

    @OptionGroup var file: DatabaseFileOptions

    @Flag(help: "Print JSON.")
    var json = false


    func run() throws {
        try reportingErrors {
            let format = try requireDatabaseFile(database)
            let library = try CipherInfo.linked()
            var facts: [(String, JSONValue)] = [
                ("path", .string(database)),
                ("size", .number(Double(FileManager.default.sizeOfFile(atPath: database)))),
                ("sqlcipher", .string(library.cipherVersion)),
                ("provider", .string(library.provider)),
            ]
            let clearHeader = EncryptedDatabaseFile.hasPlaintextHeader(at: database)
            facts.append(("header", .string(format == .notPlaintext
                ? (clearHeader ? "plaintext SQLite header, encrypted pages (its salt must be given)" : "salt (standard SQLCipher layout), or not a database")
                : "plaintext SQLite header")))
            let databaseKey: DatabaseKey?
            switch format {
            case .plaintext:
                facts.append(("format", .string("plaintext")))
                databaseKey = key.isGiven ? try key.key(prompt: "") : nil
            default:
                if !key.isGiven && isatty(STDIN_FILENO) != 1 {
                    facts.append(("format", .string("encrypted or not a database (give the key for more)")))
                    return try StandardStreams.say(render(facts))
                }
                databaseKey = try key.key(prompt: "Key for \(database): ")
            }
            let db: Database
            do {
                db = try Database.openReadOnly(path: database, key: databaseKey, options: PageReaderFallback.linkedOptions(settings)) { noteRolledBack(database) }
            } catch where format == .notPlaintext && databaseKey != nil && PageReaderFallback.isFor(error) {
                // Settings the linked SQLCipher does not read: what the page reader can say.
                let file = try PageReaderFallback.open(EncryptedDatabaseFile.self, database, key: databaseKey!, cipher: settings)
                facts.append(("format", .string(file.settings.description)))
                facts.append(("cipher_page_size", .number(Double(file.settings.effectivePageSize))))
                facts.append(("kdf_iter", .number(Double(file.settings.effectiveKDFIterations))))
                facts.append(("page_count", .number(Double(file.pageCount))))
                // SQLCipher refuses a damaged file as it refuses settings it does not read: the pages say which.
                let report = try file.verify()
                guard report.isIntact else {
                    facts.append(("damaged", .string(report.damage.prefix(3).map(\.description).joined(separator: "; ")
                        + (report.damage.count > 3 ? "; \(report.damage.count - 3) more" : ""))))
                    facts.append(("readable_by", .string("DBCrypt's page reader, up to the damage: dbcrypt check names it, dbcrypt recover saves what is left")))
                    try StandardStreams.say(render(facts))
                    throw ExitCode(ExitStatus.damaged)
                }
                facts.append(("readable_by", .string("DBCrypt's page reader only: dbcrypt check, decrypt, recover and header")))
                return try StandardStreams.say(render(facts))
            }
            if let settings = db.cipher {
                facts.append(("format", .string(settings.format.rawValue)))
                if settings.plaintextHeaderSize > 0 {
                    facts.append(("plaintext_header_size", .number(Double(settings.plaintextHeaderSize))))
                }
                facts.append(("cipher_page_size", .number(Double(settings.effectivePageSize))))
                facts.append(("kdf_iter", .number(Double(settings.effectiveKDFIterations))))
            }
            for pragma in ["page_size", "page_count", "freelist_count", "user_version", "application_id", "journal_mode"] {
                guard let value = try db.fetchOne("PRAGMA \(pragma)")?[0] else { continue }
                // SQLCipher 4 answers page_size on a keyed database in text.
                if case let .text(text) = value, let number = Int(text) {
                    facts.append((pragma, .number(Double(number))))
                } else {
                    facts.append((pragma, JSONValue(value)))
                }
            }
            var tables: [(String, JSONValue)] = []
            try namingDamage(of: database) {
                for name in try db.fetchAll(String.self, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") {
                    let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                    tables.append((name, .number(Double(try db.fetchScalar(Int.self, "SELECT count(*) FROM \(quoted)") ?? 0))))
                }
            }
            facts.append(("tables", .object(tables)))
            try StandardStreams.say(render(facts))
        }
    }

    private func render(_ facts: [(String, JSONValue)]) -> String {
        if json { return JSONValue.object(facts).encoded }
        var lines: [String] = []
        for (name, value) in facts {
            if case let .object(tables) = value {
                lines.append("tables:" + (tables.isEmpty ? " none" : ""))
                for (table, rows) in tables { lines.append("  \(table): \(rows.plain) rows") }
            } else {
                lines.append("\(name): \(value.plain)")
            }
        }
        return lines.joined(separator: "\n")
    }
}

extension FileManager {
    func sizeOfFile(atPath path: String) -> Int {
        ((try? attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
