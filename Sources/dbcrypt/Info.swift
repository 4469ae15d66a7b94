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
        let format = try requireDatabaseFile(database)
        var facts = try Self.outsideFacts(of: database, format: format)
        let plaintext = format != .notPlaintext
        if !plaintext && !key.isGiven && isatty(STDIN_FILENO) != 1 {
            facts.append(("format", .string("encrypted or not a database (give the key for more)")))
            return try StandardStreams.say(Self.render(facts, json: json))
        }
        let databaseKey = plaintext && !key.isGiven ? nil : try key.key(prompt: plaintext ? "" : "Key for \(database): ")
        var options = ExportOptions()
        options.pageReader = EncryptedDatabaseFile.self
        let described = try DatabaseEncryption.describe(database, key: databaseKey, cipher: settings, options: options) { noteRolledBack(database) }
        facts += described.facts.map { ($0.name, JSONValue($0.value)) }
        guard let report = described.pageReaderReport else {
            facts.append(("tables", .object(described.tables.map { ($0.name, .integer(Int64($0.rows))) })))
            return try StandardStreams.say(Self.render(facts, json: json))
        }
        // SQLCipher refuses a damaged file as it refuses settings it does not read: the pages say which.
        guard report.isIntact else {
            facts.append(("damaged", .string(report.damage.prefix(3).map(\.description).joined(separator: "; ")
                + (report.damage.count > 3 ? "; \(report.damage.count - 3) more" : ""))))
            facts.append(("readable_by", .string("DBCrypt's page reader, up to the damage: dbcrypt check names it, dbcrypt recover saves what is left")))
            try StandardStreams.say(Self.render(facts, json: json))
            throw ExitCode(ExitStatus.damaged)
        }
        facts.append(("readable_by", .string("DBCrypt's page reader only: dbcrypt check, decrypt, recover and header")))
        try StandardStreams.say(Self.render(facts, json: json))
    }

    /// What can be said of `database` without its key: path, size, the
    /// linked SQLCipher and the header.
    static func outsideFacts(of database: String, format: FileFormat) throws -> [(String, JSONValue)] {
        let library = try CipherInfo.linked()
        let clearHeader = EncryptedDatabaseFile.hasPlaintextHeader(at: database)
        return [
            ("path", .string(database)),
            ("size", .number(Double(sizeOfFile(database)))),
            ("sqlcipher", .string(library.cipherVersion)),
            ("provider", .string(library.provider)),
            ("header", .string(format == .notPlaintext
                ? (clearHeader ? "plaintext SQLite header, encrypted pages (its salt must be given)" : "salt (standard SQLCipher layout), or not a database")
                : "plaintext SQLite header")),
        ]
    }

    /// The facts as `name: value` lines (tables indented under `tables:`), or as one JSON object.
    static func render(_ facts: [(String, JSONValue)], json: Bool) -> String {
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

/// The size of the file `path` names (through a symbolic link, as every
/// command reads it), or 0 when it cannot be looked at.
private func sizeOfFile(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : 0
}
