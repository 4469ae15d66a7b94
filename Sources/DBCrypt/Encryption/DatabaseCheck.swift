extension DatabaseEncryption {
    /// Checks that the database at `path` opens with `key` and is intact,
    /// reading only. With ``ExportOptions/pageReader``, an encrypted file (or
    /// one whose salt or hashes are given) first has the HMAC of every page
    /// and `-wal` frame checked by that reader, each damaged one named. When
    /// the pages are intact, SQLite's integrity check reads the database
    /// through the linked SQLCipher (when it can open these settings), and on
    /// SQLCipher 4 its `cipher_integrity_check` authenticates every page again.
    /// A transaction a stopped process left unfinished is rolled back first,
    /// where this process may, and `rolledBack` is called.
    ///
    /// `options.progress` and `options.cancellation` apply to the page reader.
    ///
    /// - returns: what was found: damage is in the report, not thrown.
    /// - throws: ``DatabaseError/wrongKeyOrNotADatabase(path:)`` (an empty file too), the page
    ///   reader's error for a salt missing or wrong, ``DatabaseError/fileNotFound(path:)``,
    ///   and what opening throws otherwise.
    public static func check(_ path: String, key: DatabaseKey?, cipher: CipherSettings = .sqlcipher4,
                             options: ExportOptions = ExportOptions(), rolledBack: () -> Void = {}) throws -> CheckReport {
        var report = CheckReport(path: path)
        let format = try FileFormat.detect(at: path)
        if format == .empty { throw DatabaseError.wrongKeyOrNotADatabase(path: path) }
        if let key, let reader = options.pageReader,
           format == .notPlaintext || cipher.salt != nil || PageReaderFallback.hasOtherHashes(cipher) {
            let file = try PageReaderFallback.open(reader, path, key: key, cipher: cipher)
            report.pages = try file.verify(progress: options.progress, cancellation: options.cancellation)
            guard report.pages!.isIntact else { return report }
        }
        let db: Database
        do {
            db = try Database.openReadOnly(path: path, key: key, options: PageReaderFallback.linkedOptions(cipher), rolledBack: rolledBack)
        } catch where report.pages != nil && PageReaderFallback.isFor(error) {
            report.linkedSQLCipherOpens = false
            return report
        }
        defer { db.close() }
        report.kind = db.cipher.map { "encrypted, \($0)" } ?? "plaintext"
        do {
            report.pageCount = try db.fetchScalar(Int.self, "PRAGMA page_count") ?? 0
            report.problems = try db.integrityProblems()
            if db.cipher != nil, try CipherInfo.linked().hasCipherIntegrityCheck {
                let failed = try db.fetchAll(String.self, "PRAGMA cipher_integrity_check")
                report.problems += failed.map { "SQLCipher: \($0)" }
                report.cipherIntegrityCheckRan = true
            }
        } catch let error as DatabaseError where error.category == .damaged {
            report.problems = [error.description]
        }
        return report
    }
}

/// What ``DatabaseEncryption/check(_:key:cipher:options:rolledBack:)`` found.
public struct CheckReport: Sendable, CustomStringConvertible {
    /// The database checked.
    public let path: String
    /// The page reader's report, when it read the file.
    public internal(set) var pages: VerificationReport?
    /// Whether the linked SQLCipher could open the file for SQLite's integrity check.
    public internal(set) var linkedSQLCipherOpens = true
    /// "plaintext", or "encrypted, <settings>" as the linked SQLCipher opened it.
    public internal(set) var kind: String?
    /// Pages SQLite counts.
    public internal(set) var pageCount = 0
    /// What SQLite's integrity check (and SQLCipher's) reported other than "ok".
    public internal(set) var problems: [String] = []
    /// Whether SQLCipher's own `cipher_integrity_check` ran (SQLCipher 4.x).
    public internal(set) var cipherIntegrityCheckRan = false

    init(path: String) { self.path = path }

    /// Whether every page authenticated and SQLite found no problem.
    public var isIntact: Bool { (pages?.isIntact ?? true) && problems.isEmpty }

    /// The damage in one sentence (the pages and frames are in ``description``).
    public var summary: String {
        if let pages, !pages.isIntact {
            return "\(pages.damageCount) page(s) or frame(s) do not authenticate."
        }
        return problems.prefix(5).joined(separator: "; ")
    }

    /// The result: a line per damaged page or frame, or one line saying what
    /// was checked and that it is intact.
    public var description: String {
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
}
