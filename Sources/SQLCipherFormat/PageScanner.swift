/// One row of the schema table (`sqlite_master`) as the file holds it.
public struct SalvagedSchemaEntry: Sendable, Equatable {
    /// "table", "index", "view" or "trigger".
    public let type: String
    /// The table's (index's, view's, trigger's) name.
    public let name: String
    /// The table it belongs to (its own name, for a table).
    public let tableName: String
    /// The root page of its b-tree (0 for views and triggers).
    public let rootPage: Int
    /// Its CREATE statement (nil for automatic indexes).
    public let sql: String?

    /// Whether it is a virtual table: its rows are in its module's shadow
    /// tables, and it has no b-tree.
    public var isVirtualTable: Bool {
        type == "table" && rootPage == 0 && sql.map(SchemaStatement.makesVirtualTable) == true
    }
}

/// Reads the rows of a plaintext SQLite file page by page, without SQLite,
/// as a damaged file's salvage needs: what ``EncryptedDatabaseFile/recoverPages(to:progress:cancellation:)``
/// writes, where pages that did not authenticate are zeros. Every read is
/// bounds-checked: a page that is not what it claims is skipped, never trusted.
/// Tables are walked from their roots: a table b-tree, or the index b-tree
/// of a WITHOUT ROWID table. The rows of table leaves that no walk reached
/// (their parent page was lost) are handed out as orphans.
public final class PageScanner {
    private let reader: SourceFile
    /// Bytes per page.
    public let pageSize: Int
    /// Bytes of each page that b-trees use (the page size less the reserve).
    let usableSize: Int
    /// Pages in the file.
    public let pageCount: Int
    /// How the file stores text: the header's 1 (UTF-8), 2 (UTF-16le) or 3 (UTF-16be).
    private let textEncoding: UInt32
    /// Pages a walk has visited (b-tree and overflow pages), or that are on the freelist.
    private var claimed: Set<Int> = []

    /// Opens a plaintext SQLite file.
    ///
    /// - throws: ``SQLCipherFormatError/cannotRead(path:reason:)``, or
    ///   ``SQLCipherFormatError/tooShort(path:size:)`` when page 1 holds no SQLite header.
    public init(path: String) throws {
        reader = try SourceFile(path: path)
        let first = try reader.read(100, at: 0)
        guard let header = SQLiteHeader(first), header.reserve < header.pageSize - 480 else {
            throw SQLCipherFormatError.tooShort(path: path, size: reader.size)
        }
        pageSize = header.pageSize
        usableSize = header.pageSize - header.reserve
        pageCount = Int(reader.size / Int64(header.pageSize))
        textEncoding = header.textEncoding
        claimFreelist(trunk: Int(SQLiteHeader.word(first, 32)))
    }

    /// The schema table's rows that can be read.
    public func schema() throws -> [SalvagedSchemaEntry] {
        var entries: [SalvagedSchemaEntry] = []
        try rows(ofTreeAt: 1) { _, values in
            guard values.count >= 5, case let .text(type) = values[0], case let .text(name) = values[1],
                  case let .text(table) = values[2] else { return }
            var root = 0
            if case let .integer(page) = values[3] { root = Int(clamping: page) }
            var sql: String?
            if case let .text(text) = values[4] { sql = text }
            entries.append(SalvagedSchemaEntry(type: type, name: name, tableName: table, rootPage: root, sql: sql))
        }
        return entries
    }

    /// Calls `visit` with the rowid and values of every row that can be
    /// read of the table whose b-tree is rooted at `root`: a table b-tree,
    /// in rowid order, or the index b-tree of a WITHOUT ROWID table, whose
    /// rows have no rowid (nil) and hold the primary key's columns first,
    /// then the others in the table's order. Pages of the other kind of
    /// b-tree are not followed.
    public func rows(ofTreeAt root: Int, _ visit: (Int64?, [SalvagedValue]) throws -> Void) throws {
        guard root >= 1, root <= pageCount, let rootPage = try page(root) else { return }
        let isIndex = [2, 10].contains(rootPage[root == 1 ? 100 : 0])
        let (interior, leaf): (UInt8, UInt8) = isIndex ? (2, 10) : (5, 13)
        var pending = [root]
        while let number = pending.popLast() {
            guard number >= 1, number <= pageCount, !claimed.contains(number), let page = try page(number) else { continue }
            let start = number == 1 ? 100 : 0
            guard page[start] == interior || page[start] == leaf else { continue }
            claimed.insert(number)
            let cells = cellOffsets(page, start: start, headerSize: page[start] == interior ? 12 : 8)
            if page[start] == interior {
                // Children, the right-most last, so that a table's walk goes in rowid order.
                var children = cells.compactMap { offset in offset + 4 <= usableSize ? Int(SQLiteHeader.word(page, offset)) : nil }
                children.append(Int(SQLiteHeader.word(page, start + 8)))
                pending.append(contentsOf: children.reversed())
            }
            if isIndex {
                // An index b-tree's interior cells are entries too, after their child's page number.
                for offset in cells {
                    var at = page[start] == interior ? offset + 4 : offset
                    guard let size = Self.varint(page, &at, end: usableSize), size >= 0, size <= Int64(1) << 31,
                          let payload = try payload(page, at: at, size: Int(size), index: true),
                          let values = record(payload) else { continue }
                    try visit(nil, values)
                }
            } else if page[start] == leaf {
                try leafRows(page, start: start, visit)
            }
        }
    }

    /// Calls `visit` with the page number, rowid and values of the rows on
    /// table leaves that no walk reached and that are not on the freelist.
    /// Call it after walking every table; it may be called more than once.
    public func orphanRows(_ visit: (Int, Int64, [SalvagedValue]) throws -> Void) throws {
        for number in 2...max(2, pageCount) where number <= pageCount && !claimed.contains(number) {
            guard let page = try page(number), page[0] == 13 else { continue }
            try leafRows(page, start: 0) { try visit(number, $0, $1) }
        }
    }

    private func page(_ number: Int) throws -> [UInt8]? {
        let bytes = try reader.read(pageSize, at: Int64(number - 1) * Int64(pageSize))
        return bytes.count == pageSize ? bytes : nil
    }

    /// The cell offsets a b-tree page lists, those inside the page only.
    private func cellOffsets(_ page: [UInt8], start: Int, headerSize: Int) -> [Int] {
        let count = Int(page[start + 3]) << 8 | Int(page[start + 4])
        let array = start + headerSize
        guard array + 2 * count <= usableSize else { return [] }
        return (0..<count).compactMap { index in
            let offset = Int(page[array + 2 * index]) << 8 | Int(page[array + 2 * index + 1])
            return offset >= array + 2 * count && offset < usableSize ? offset : nil
        }
    }

    private func leafRows(_ page: [UInt8], start: Int, _ visit: (Int64, [SalvagedValue]) throws -> Void) throws {
        for offset in cellOffsets(page, start: start, headerSize: 8) {
            var at = offset
            guard let payloadSize = Self.varint(page, &at, end: usableSize), let rowid = Self.varint(page, &at, end: usableSize),
                  payloadSize >= 0, payloadSize <= Int64(1) << 31,
                  let payload = try payload(page, at: at, size: Int(payloadSize), index: false),
                  let values = record(payload) else { continue }
            try visit(rowid, values)
        }
    }

    /// A cell's payload: the part on the page, then its overflow chain. An
    /// `index` b-tree's cells keep less on the page than a table leaf's.
    private func payload(_ page: [UInt8], at start: Int, size: Int, index: Bool) throws -> [UInt8]? {
        let maxLocal = index ? (usableSize - 12) * 64 / 255 - 23 : usableSize - 35
        let minLocal = (usableSize - 12) * 32 / 255 - 23
        var local = size
        if size > maxLocal {
            let k = minLocal + (size - minLocal) % (usableSize - 4)
            local = k <= maxLocal ? k : minLocal
        }
        guard start + local <= usableSize else { return nil }
        var payload = Array(page[start..<start + local])
        guard local < size else { return payload }
        guard start + local + 4 <= usableSize else { return nil }
        var next = Int(SQLiteHeader.word(page, start + local))
        var seen: Set<Int> = []
        while payload.count < size {
            guard next >= 2, next <= pageCount, seen.insert(next).inserted, let overflow = try self.page(next) else { return nil }
            claimed.insert(next)
            let take = min(size - payload.count, usableSize - 4)
            payload.append(contentsOf: overflow[4..<4 + take])
            next = Int(SQLiteHeader.word(overflow, 0))
        }
        return payload
    }

    /// The values of a record, its text in the file's encoding, or nil when it is not one.
    func record(_ payload: [UInt8]) -> [SalvagedValue]? {
        Self.record(payload, textEncoding: textEncoding)
    }

    /// The values of a record whose text is in `textEncoding` (as the
    /// header says it: 2 and 3 are UTF-16, anything else UTF-8), or nil
    /// when it is not one.
    static func record(_ payload: [UInt8], textEncoding: UInt32 = 1) -> [SalvagedValue]? {
        var at = 0
        guard let headerSize = varint(payload, &at, end: payload.count), headerSize >= 1, headerSize <= payload.count else { return nil }
        var types: [Int64] = []
        while at < Int(headerSize) {
            guard let type = varint(payload, &at, end: Int(headerSize)) else { return nil }
            types.append(type)
        }
        var body = Int(headerSize)
        var values: [SalvagedValue] = []
        for type in types {
            let size: Int
            switch type {
            case 0, 8, 9: size = 0
            case 1...4: size = Int(type)
            case 5: size = 6
            case 6, 7: size = 8
            case 10, 11: return nil
            default:
                guard type >= 12, type < Int64(1) << 32 else { return nil }  // a 9-byte varint can be negative
                size = Int(type - 12) / 2
            }
            guard body + size <= payload.count else { return nil }
            let bytes = payload[body..<body + size]
            switch type {
            case 0: values.append(.null)
            case 8: values.append(.integer(0))
            case 9: values.append(.integer(1))
            case 1...6:
                var value = Int64(Int8(bitPattern: bytes.first!))
                for byte in bytes.dropFirst() { value = value << 8 | Int64(byte) }
                values.append(.integer(value))
            case 7:
                values.append(.real(Double(bitPattern: bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })))
            default:
                values.append(type % 2 == 0 ? .blob(Array(bytes)) : .text(Self.text(bytes, textEncoding)))
            }
            body += size
        }
        return values
    }

    /// `bytes` as text in `encoding`: UTF-16 (2 little-endian, 3 big-endian;
    /// an odd last byte dropped), else UTF-8; invalid sequences replaced.
    private static func text(_ bytes: ArraySlice<UInt8>, _ encoding: UInt32) -> String {
        guard encoding == 2 || encoding == 3 else { return String(decoding: bytes, as: UTF8.self) }
        let (high, low) = encoding == 3 ? (0, 1) : (1, 0)
        let units = stride(from: bytes.startIndex, to: bytes.endIndex - 1, by: 2).map { at -> UInt16 in
            UInt16(bytes[at + high]) << 8 | UInt16(bytes[at + low])
        }
        return String(decoding: units, as: UTF16.self)
    }

    /// SQLite's variable-length integer at `at` (advanced past it), or nil past `end`.
    static func varint(_ bytes: [UInt8], _ at: inout Int, end: Int) -> Int64? {
        var value: UInt64 = 0
        for index in 0..<9 {
            guard at < min(end, bytes.count) else { return nil }
            let byte = bytes[at]
            at += 1
            if index == 8 { return Int64(bitPattern: value << 8 | UInt64(byte)) }
            value = value << 7 | UInt64(byte & 0x7f)
            if byte & 0x80 == 0 { return Int64(bitPattern: value) }
        }
        return nil
    }

    /// Marks the freelist's pages, so that no orphan is a deleted row.
    private func claimFreelist(trunk first: Int) {
        var trunk = first
        while trunk >= 2, trunk <= pageCount, claimed.insert(trunk).inserted, let page = try? page(trunk) {
            let leaves = Int(SQLiteHeader.word(page, 4))
            for index in 0..<min(leaves, (usableSize - 8) / 4) {
                claimed.insert(Int(SQLiteHeader.word(page, 8 + 4 * index)))
            }
            trunk = Int(SQLiteHeader.word(page, 0))
        }
    }
}
