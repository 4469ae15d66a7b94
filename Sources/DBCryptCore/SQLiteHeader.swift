/// The fields of SQLite's 100-byte database header that a page reader needs
/// (https://sqlite.org/fileformat.html, section 1.3).
package struct SQLiteHeader {
    /// "SQLite format 3" and a zero byte: the first 16 bytes of a plaintext
    /// database, and of a SQLCipher file with a plaintext header.
    package static let magic: [UInt8] = Array("SQLite format 3\u{0}".utf8)

    /// The page sizes SQLite allows.
    package static let pageSizes = [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]

    /// Bytes per page.
    package let pageSize: Int
    /// Bytes reserved at the end of each page (SQLCipher's IV and HMAC).
    package let reserve: Int
    /// The file change counter (bytes 24-27).
    package let changeCounter: UInt32
    /// The database's size in pages (bytes 28-31), if ``validPageCount``.
    package let pageCount: UInt32
    /// The change counter at which ``pageCount`` was written (bytes 92-95).
    package let versionValidFor: UInt32
    /// The `user_version` (bytes 60-63).
    package let userVersion: Int32
    /// How text is stored (bytes 56-59): 1 UTF-8, 2 UTF-16le, 3 UTF-16be (0 in a new empty file).
    package let textEncoding: UInt32

    /// The header in the first 100 bytes of `page`, or nil when its fixed
    /// fields are not SQLite's (page size, file format versions, payload fractions).
    /// Bytes 0-15 (the magic, or a salt) are not looked at.
    package init?(_ page: some Collection<UInt8>) {
        let bytes = Array(page.prefix(100))
        guard bytes.count == 100 else { return nil }
        let rawSize = Int(bytes[16]) << 8 | Int(bytes[17])
        pageSize = rawSize == 1 ? 65536 : rawSize
        reserve = Int(bytes[20])
        guard Self.pageSizes.contains(pageSize), (1...2).contains(bytes[18]), (1...2).contains(bytes[19]),
              bytes[21] == 64, bytes[22] == 32, bytes[23] == 32 else { return nil }
        changeCounter = Self.word(bytes, 24)
        pageCount = Self.word(bytes, 28)
        versionValidFor = Self.word(bytes, 92)
        userVersion = Int32(bitPattern: Self.word(bytes, 60))
        textEncoding = Self.word(bytes, 56)
    }

    /// The big-endian 32-bit word at `at`, as SQLite stores its integers.
    package static func word(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The page count the header vouches for: only when the header was last
    /// written by a SQLite that keeps it (its version-valid-for matches the
    /// change counter), as SQLite itself decides.
    package var validPageCount: Int? {
        changeCounter == versionValidFor && pageCount > 0 ? Int(pageCount) : nil
    }

    /// Whether the first page of a file is a plaintext SQLite database's:
    /// the magic, a valid header and ``hasPageOneLayout(_:)``. A SQLCipher
    /// file with a plaintext header has the magic too, but its bytes past
    /// the header are encrypted.
    package static func isPlaintextDatabase(_ page: [UInt8]) -> Bool {
        page.count > 100 && Array(page[0..<16]) == magic && SQLiteHeader(page) != nil && hasPageOneLayout(page)
    }

    /// Whether `start`, the first bytes of a file or of a decrypted page 1,
    /// holds what SQLite writes on page 1 of every database past the fields
    /// ``init(_:)`` checks: zero in bytes 72-91 (reserved for expansion), in
    /// bytes 96-99 the version number of a SQLite 3 (or 0, never written),
    /// and at byte 100 the type of a table b-tree page (5 or 13: page 1 is
    /// the schema table's root). Only the bytes `start` holds are looked at.
    /// A plaintext header (32 bytes in iOS apps, at most 96) ends before
    /// these bytes, so a SQLCipher file that has one fails the test, but for
    /// a chance of about 1 in 550,000 at 96 bytes (whatever the page size).
    /// Damage elsewhere in page 1 (its cells, its other b-tree fields) does
    /// not make a plaintext database look encrypted.
    package static func hasPageOneLayout(_ start: [UInt8]) -> Bool {
        guard start.dropFirst(72).prefix(20).allSatisfy({ $0 == 0 }) else { return false }
        if start.count >= 100 {
            let version = word(start, 96)
            guard version == 0 || (3_000_000...3_999_999).contains(version) else { return false }
        }
        return start.count <= 100 || start[100] == 5 || start[100] == 13
    }
}
