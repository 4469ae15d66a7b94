extension DatabaseEncryption {
    /// Describes the database at `path`, reading only: its format and cipher
    /// settings, SQLite's counts, and each table's rows, through the linked
    /// SQLCipher. A file it cannot open (SQLCipher 1 or 2 settings, other
    /// hashes on 3.4.1, or damage) is described by ``ExportOptions/pageReader``
    /// when one is given: its settings, its page count, and which pages do not
    /// authenticate. A transaction a stopped process left unfinished is
    /// rolled back first, where this process may, and `rolledBack` is called.
    ///
    /// - throws: what opening throws: ``DatabaseError/wrongKeyOrNotADatabase(path:)`` (an empty file too),
    ///   ``DatabaseError/fileNotFound(path:)``, ...; ``DatabaseError/damaged(path:reason:)``
    ///   when counting a table's rows meets damage.
    public static func describe(_ path: String, key: DatabaseKey?, cipher: CipherSettings = .sqlcipher4,
                                options: ExportOptions = ExportOptions(), rolledBack: () -> Void = {}) throws -> DatabaseDescription {
        if try FileFormat.detect(at: path) == .empty { throw DatabaseError.wrongKeyOrNotADatabase(path: path) }
        let db: Database
        do {
            db = try Database.openReadOnly(path: path, key: key, options: PageReaderFallback.linkedOptions(cipher), rolledBack: rolledBack)
        } catch where key != nil && options.pageReader != nil && PageReaderFallback.isFor(error)
                    && (try? FileFormat.detect(at: path)) == .notPlaintext {
            let file = try PageReaderFallback.open(options.pageReader!, path, key: key!, cipher: cipher)
            let facts: [(String, DatabaseValue)] = [("format", .text(file.settings.description)),
                                                    ("cipher_page_size", .integer(Int64(file.settings.effectivePageSize))),
                                                    ("kdf_iter", .integer(Int64(file.settings.effectiveKDFIterations))),
                                                    ("page_count", .integer(Int64(file.pageCount)))]
            return DatabaseDescription(facts: facts, tables: [], pageReaderReport: try file.verify(progress: nil, cancellation: nil))
        }
        defer { db.close() }
        var facts: [(String, DatabaseValue)] = [("format", .text(db.cipher?.format.rawValue ?? "plaintext"))]
        if let settings = db.cipher {
            if settings.plaintextHeaderSize > 0 { facts.append(("plaintext_header_size", .integer(Int64(settings.plaintextHeaderSize)))) }
            facts.append(("cipher_page_size", .integer(Int64(settings.effectivePageSize))))
            facts.append(("kdf_iter", .integer(Int64(settings.effectiveKDFIterations))))
        }
        for pragma in ["page_size", "page_count", "freelist_count", "user_version", "application_id", "journal_mode"] {
            guard let value = try db.fetchOne("PRAGMA \(pragma)")?[0] else { continue }
            // SQLCipher 4 answers page_size on a keyed database in text.
            if case let .text(text) = value, let number = Int64(text) {
                facts.append((pragma, .integer(number)))
            } else {
                facts.append((pragma, value))
            }
        }
        do {
            return DatabaseDescription(facts: facts, tables: try db.tableRowCounts(), pageReaderReport: nil)
        } catch let error as DatabaseError where error.category == .damaged {
            guard case let .sqlite(_, message, _) = error else { throw error }
            throw DatabaseError.damaged(path: path, reason: message)
        }
    }
}

/// What ``DatabaseEncryption/describe(_:key:cipher:options:rolledBack:)`` found.
public struct DatabaseDescription: Sendable {
    /// Facts by name, in order: `format` (a standard format's name, a page
    /// reader's description of the settings, or `plaintext`), the cipher's
    /// `plaintext_header_size` (when not 0), `cipher_page_size` and `kdf_iter`,
    /// then what SQLite answers to `page_size`, `page_count`,
    /// `freelist_count`, `user_version`, `application_id` and `journal_mode`
    /// (`page_count` alone when the page reader read the file).
    public let facts: [(name: String, value: DatabaseValue)]
    /// Each table and its rows, by name (virtual tables left out: their rows
    /// are in their shadow tables); empty when the page reader read the file.
    public let tables: [(name: String, rows: Int)]
    /// The page reader's verification, when only the page reader could
    /// read the file (the linked SQLCipher cannot open its settings, or
    /// damage keeps it from opening: the report names the pages); nil when
    /// the linked SQLCipher read it.
    public let pageReaderReport: VerificationReport?
}
