/// A `-wal` file as SQLite writes it (https://sqlite.org/fileformat.html,
/// section 4): a 32-byte header, then frames of a 24-byte header and one
/// page image each, chained by a running checksum. SQLCipher writes the page
/// images encrypted, exactly as it writes them to the database file.
struct WriteAheadLog {
    /// One frame whose salts match the log's header: part of the current log.
    struct Frame {
        /// Its position in the log, from 0.
        let index: Int
        /// The page it holds.
        let pageNumber: UInt32
        /// For a commit frame, the database's size in pages after the commit; else 0.
        let commitSize: UInt32
        /// Where the frame (its header) starts in the file.
        let offset: Int64
        /// Whether its checksum continues the chain and its salts are the
        /// header's, as SQLite requires of every frame it reads.
        let headerMatches: Bool
    }

    static let headerSize = 32
    static let frameHeaderSize = 24

    let reader: FileReader
    let pageSize: Int
    /// Whether the header's magic, version, page size and checksum are SQLite's.
    let headerIsValid: Bool
    private let bigEndianChecksums: Bool
    private let salts: [UInt8]
    /// The checksum the header stores, and the one computed over its bytes
    /// (they differ when the header is damaged).
    private let headerChecksum: (UInt32, UInt32), computedHeaderChecksum: (UInt32, UInt32)

    /// The log beside `databasePath`, or nil when there is none or it is empty.
    ///
    /// - throws: ``SQLCipherFormatError/cannotRead(path:reason:)``.
    static func beside(_ databasePath: String, pageSize: Int) throws -> WriteAheadLog? {
        let reader: FileReader
        do {
            reader = try FileReader(path: databasePath + "-wal")
        } catch SQLCipherFormatError.fileNotFound {
            return nil
        }
        guard reader.size > 0 else { return nil }
        return try WriteAheadLog(reader: reader, pageSize: pageSize)
    }

    private init(reader: FileReader, pageSize: Int) throws {
        self.reader = reader
        self.pageSize = pageSize
        let header = try reader.read(Self.headerSize, at: 0)
        let magic = header.count == 32 ? Self.word(header, 0, bigEndian: true) : 0
        bigEndianChecksums = magic & 1 == 1
        salts = header.count == 32 ? Array(header[16..<24]) : []
        let computed = header.count == 32 ? Self.checksum(header[0..<24], bigEndian: bigEndianChecksums, seed: (0, 0)) : (0, 0)
        headerChecksum = header.count == 32 ? (Self.word(header, 24, bigEndian: true), Self.word(header, 28, bigEndian: true)) : (0, 0)
        computedHeaderChecksum = computed
        headerIsValid = header.count == 32 && magic & ~1 == 0x377f_0682 && Self.word(header, 4, bigEndian: true) == 3_007_000
            && Self.word(header, 8, bigEndian: true) == UInt32(pageSize == 65536 ? 1 : pageSize)
            && computed == (Self.word(header, 24, bigEndian: true), Self.word(header, 28, bigEndian: true))
    }

    /// The bytes of frame `index`'s page image.
    func pageRange(of frame: Frame) -> Range<Int64> {
        let start = frame.offset + Int64(Self.frameHeaderSize)
        return start..<start + Int64(pageSize)
    }

    /// Calls `visit` with each frame of the current log and its page image, in
    /// order, until the end of the file or a frame left from an earlier log
    /// (other salts, and a checksum that does not continue the chain);
    /// `cutShort` with the byte range of a last frame the file ends inside.
    /// A frame that breaks the chain or has other salts but not both is one
    /// of this log's, damaged: it is visited with `headerMatches` false and
    /// the chain goes on from its stored checksum, so one damaged frame does
    /// not hide the next. A damaged log header does not stop the scan either,
    /// and does not make its frames damaged: the chain then starts from the
    /// checksum the header stores or from the one its bytes give (whichever
    /// the first frame continues), and the salts are the first frame's.
    func scan(_ visit: (Frame, UnsafeRawBufferPointer) throws -> Void, cutShort: (Int, Range<Int64>) throws -> Void) throws {
        guard reader.size >= Int64(Self.headerSize) else { return }
        let frameSize = Self.frameHeaderSize + pageSize
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: frameSize, alignment: 16)
        defer { buffer.deallocate() }
        var chain = headerIsValid ? [headerChecksum] : [headerChecksum, computedHeaderChecksum]
        var salts = self.salts
        var index = 0
        var offset = Int64(Self.headerSize)
        while offset < reader.size {
            let got = try reader.read(into: buffer, at: offset)
            guard got == frameSize else {
                try cutShort(index, offset..<reader.size)
                return
            }
            let header = UnsafeRawBufferPointer(rebasing: buffer[0..<Self.frameHeaderSize])
            let page = UnsafeRawBufferPointer(rebasing: buffer[Self.frameHeaderSize...])
            let stored = (Self.word(header, 16, bigEndian: true), Self.word(header, 20, bigEndian: true))
            // After a damaged frame the chain goes on from its stored checksum
            // (its bytes were changed) or from the one computed (its stored
            // checksum was): whichever the next frame continues.
            let computed = chain.map { seed in
                Self.checksum(page[...], bigEndian: bigEndianChecksums,
                              seed: Self.checksum(header[0..<8], bigEndian: bigEndianChecksums, seed: seed))
            }
            let continues = computed.contains { $0 == stored }
            if index == 0, !headerIsValid, continues { salts = Array(header[8..<16]) }
            let saltsMatch = header[8..<16].elementsEqual(salts)
            guard saltsMatch || continues else { return }
            let frame = Frame(index: index, pageNumber: Self.word(header, 0, bigEndian: true),
                              commitSize: Self.word(header, 4, bigEndian: true), offset: offset,
                              headerMatches: saltsMatch && continues)
            try visit(frame, page)
            chain = continues ? [stored] : [stored] + computed
            index += 1
            offset += Int64(frameSize)
        }
    }

    /// SQLite's WAL checksum over `bytes` (a multiple of 8), from `seed`.
    static func checksum<Bytes: Collection<UInt8>>(_ bytes: Bytes, bigEndian: Bool, seed: (UInt32, UInt32)) -> (UInt32, UInt32)
    where Bytes.Index == Int {
        var (s0, s1) = seed
        var at = bytes.startIndex
        while at + 8 <= bytes.endIndex {
            s0 = s0 &+ word(bytes, at, bigEndian: bigEndian) &+ s1
            s1 = s1 &+ word(bytes, at + 4, bigEndian: bigEndian) &+ s0
            at += 8
        }
        return (s0, s1)
    }

    /// The 32-bit word at `at`.
    static func word<Bytes: Collection<UInt8>>(_ bytes: Bytes, _ at: Int, bigEndian: Bool) -> UInt32 where Bytes.Index == Int {
        let b0 = UInt32(bytes[at]), b1 = UInt32(bytes[at + 1]), b2 = UInt32(bytes[at + 2]), b3 = UInt32(bytes[at + 3])
        return bigEndian ? b0 << 24 | b1 << 16 | b2 << 8 | b3 : b3 << 24 | b2 << 16 | b1 << 8 | b0
    }
}
