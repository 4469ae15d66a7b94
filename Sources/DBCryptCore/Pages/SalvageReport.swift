/// What a decryption or a recovery wrote.
public struct DecryptionSummary: Sendable {
    /// Pages in the plaintext file.
    public let pageCount: Int
    /// How many of them came from committed frames of the `-wal` file.
    public let pagesFromLog: Int
    /// Pages written as zeros because they did not authenticate or were
    /// missing (a recovery only; a decryption refuses such a file).
    public let zeroedPages: [Int]

    package init(pageCount: Int, pagesFromLog: Int, zeroedPages: [Int]) {
        (self.pageCount, self.pagesFromLog, self.zeroedPages) = (pageCount, pagesFromLog, zeroedPages)
    }
}

/// What a salvage rebuilt, and what it could not. Its description is a
/// few lines for a person: each table and its rows, the rows in
/// `lost_and_found`, the notes, and which pages were lost.
public struct SalvageReport: Sendable, CustomStringConvertible {
    /// The pages read: how many, and which did not authenticate and were lost.
    public let pages: DecryptionSummary
    /// Whether the pages carry an HMAC that was checked (SQLCipher 1's do
    /// not: nothing vouches that they were not altered).
    public let authenticated: Bool
    /// The tables rebuilt and their row counts, in schema order.
    public package(set) var tables: [(name: String, rows: Int)] = []
    /// Rows put in `lost_and_found`: rows whose table could not be told, or
    /// that their table did not take (the notes say which tables).
    public package(set) var orphans = 0
    /// What could not be rebuilt, one sentence each.
    public package(set) var notes: [String] = []

    package init(pages: DecryptionSummary, authenticated: Bool) {
        (self.pages, self.authenticated) = (pages, authenticated)
    }

    /// Each table and its rows, the rows in `lost_and_found` and the notes,
    /// indented, then a sentence on the pages: how many were lost, and which.
    public var description: String {
        var lines = tables.map { "  \($0.name): \($0.rows) rows" }
        if orphans > 0 { lines.append("  lost_and_found: \(orphans) rows whose table could not be told or did not take them") }
        lines += notes.map { "  note: \($0)" }
        let (zeroed, pageCount) = (pages.zeroedPages, pages.pageCount)
        if !zeroed.isEmpty {
            lines.append("\(zeroed.count) of \(pageCount) pages did not authenticate and were lost (\(PageList.described(zeroed))).")
        } else if authenticated {
            lines.append("Every one of the \(pageCount) pages authenticated.")
        } else {
            lines.append("Every one of the \(pageCount) pages decrypted; SQLCipher 1 pages carry no HMAC, so whether they were altered cannot be verified.")
        }
        return lines.joined(separator: "\n")
    }
}

/// Page numbers as a sentence quotes them.
package enum PageList {
    /// "page 3", "pages 1, 7", or the first eight page numbers and how many more.
    package static func described(_ pages: [Int]) -> String {
        let shown = pages.prefix(8).map(String.init).joined(separator: ", ")
        return pages.count > 8 ? "pages \(shown) and \(pages.count - 8) more" : (pages.count == 1 ? "page \(shown)" : "pages \(shown)")
    }
}
