/// One page (or WAL frame) that is not as SQLCipher wrote it.
public struct PageDamage: Sendable, Hashable, CustomStringConvertible {
    /// What is wrong with it.
    public enum Kind: String, Sendable, Hashable {
        /// Its HMAC does not match its bytes: changed after it was written, or
        /// written with another key.
        case hmacMismatch = "HMAC mismatch"
        /// The file ends inside it.
        case shortPage = "short page"
        /// Page 1 authenticates but does not hold a SQLite header, or a WAL
        /// file's header is not SQLite's.
        case badHeader = "bad header"
        /// The file ends before the last page its header counts.
        case missing = "missing"
        /// A WAL frame's checksum or salts do not match the log's: SQLite
        /// stops reading the log there, and ignores this frame and every later one.
        case walFrameHeader = "WAL frame header mismatch"
    }

    /// Where the damage is.
    public enum Location: Sendable, Hashable {
        /// The database file.
        case database
        /// Frame `frame` (from 0) of the `-wal` file beside it.
        case wal(frame: Int)
    }

    /// The page number, or nil for a WAL file's header (or a frame whose
    /// header is too damaged to tell).
    public let page: Int?
    /// The file it is in.
    public let location: Location
    /// Its bytes in that file.
    public let byteRange: Range<Int64>
    /// What is wrong.
    public let kind: Kind

    /// Damage from its parts.
    public init(page: Int?, location: Location, byteRange: Range<Int64>, kind: Kind) {
        self.page = page
        self.location = location
        self.byteRange = byteRange
        self.kind = kind
    }

    /// "page 7 (bytes 24576-28671): HMAC mismatch", "WAL frame 3, page 2 (...)".
    public var description: String {
        let bytes = "bytes \(byteRange.lowerBound)-\(byteRange.upperBound - 1)"
        switch location {
        case .database:
            return "page \(page ?? 0) (\(bytes)): \(kind.rawValue)"
        case let .wal(frame):
            if let page { return "WAL frame \(frame), page \(page) (\(bytes)): \(kind.rawValue)" }
            return kind == .badHeader ? "WAL header (\(bytes)): \(kind.rawValue)" : "WAL frame \(frame) (\(bytes)): \(kind.rawValue)"
        }
    }
}

/// What a verification found.
public struct VerificationReport: Sendable {
    /// The settings the file was read with.
    public var settings: CipherSettings { layout.settings }
    /// Those settings, resolved for reading pages.
    let layout: PageLayout
    /// Pages in the database file (a last, partial one counted).
    public let pageCount: Int
    /// Frames of the current log in the `-wal` file beside it (0 when there is none).
    public let walFrameCount: Int
    /// Whether pages carry HMACs; false for SQLCipher 1 files, whose pages cannot be verified.
    public let authenticated: Bool
    /// The damaged pages and frames, in file order: the first ``damageLimit``.
    public let damage: [PageDamage]
    /// How many damaged pages and frames there are in all.
    public let damageCount: Int

    /// How many damaged pages a report lists at most (its memory stays bounded on a 2 GiB file).
    public static let damageLimit = 10_000

    /// Whether nothing is damaged.
    public var isIntact: Bool { damageCount == 0 }

    /// A report from what a page reader found, for a ``PageReading`` of your own.
    public init(settings: CipherSettings, pageCount: Int, walFrameCount: Int, authenticated: Bool, damage: [PageDamage], damageCount: Int) {
        self.init(layout: PageLayout(settings), pageCount: pageCount, walFrameCount: walFrameCount, authenticated: authenticated,
                  damage: damage, damageCount: damageCount)
    }

    /// A report from its parts: what a page reader found.
    package init(layout: PageLayout, pageCount: Int, walFrameCount: Int, authenticated: Bool, damage: [PageDamage], damageCount: Int) {
        self.layout = layout
        self.pageCount = pageCount
        self.walFrameCount = walFrameCount
        self.authenticated = authenticated
        self.damage = damage
        self.damageCount = damageCount
    }
}
