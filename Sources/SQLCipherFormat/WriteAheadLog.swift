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

    let reader: SourceFile
    let pageSize: Int
    /// Whether the header's magic, version, page size and checksum are SQLite's.
    let headerIsValid: Bool
    private let bigEndianChecksums: Bool
    private let salts: [UInt8]
    /// The checksum the header stores, and the one computed over its bytes
    /// (they differ when the header is damaged).
    private let headerChecksum: (UInt32, UInt32), computedHeaderChecksum: (UInt32, UInt32)
    /// The header's checksum in the other byte order, for a damaged magic.
    private let otherOrderHeaderChecksum: (UInt32, UInt32)

    /// The log beside `databasePath`, or nil when there is none or it is empty.
    ///
    /// - throws: ``SQLCipherFormatError/cannotRead(path:reason:)``.
    static func beside(_ databasePath: String, pageSize: Int) throws -> WriteAheadLog? {
        let reader: SourceFile
        do {
            reader = try SourceFile(path: databasePath + "-wal")
        } catch SQLCipherFormatError.fileNotFound {
            return nil
        }
        guard reader.size > 0 else { return nil }
        return try WriteAheadLog(reader: reader, pageSize: pageSize)
    }

    init(reader: SourceFile, pageSize: Int) throws {
        self.reader = reader
        self.pageSize = pageSize
        let header = try reader.read(Self.headerSize, at: 0)
        let magic = header.count == 32 ? WriteAheadLogChecksum.word(header, 0, bigEndian: true) : 0
        bigEndianChecksums = magic & 1 == 1
        salts = header.count == 32 ? Array(header[16..<24]) : []
        let computed = header.count == 32 ? WriteAheadLogChecksum.of(header[0..<24], bigEndian: bigEndianChecksums, seed: (0, 0)) : (0, 0)
        headerChecksum = header.count == 32 ? (WriteAheadLogChecksum.word(header, 24, bigEndian: true), WriteAheadLogChecksum.word(header, 28, bigEndian: true)) : (0, 0)
        computedHeaderChecksum = computed
        otherOrderHeaderChecksum = header.count == 32 ? WriteAheadLogChecksum.of(header[0..<24], bigEndian: !bigEndianChecksums, seed: (0, 0)) : (0, 0)
        headerIsValid = header.count == 32 && magic & ~1 == 0x377f_0682 && WriteAheadLogChecksum.word(header, 4, bigEndian: true) == 3_007_000
            && WriteAheadLogChecksum.word(header, 8, bigEndian: true) == UInt32(pageSize == 65536 ? 1 : pageSize)
            && computed == (WriteAheadLogChecksum.word(header, 24, bigEndian: true), WriteAheadLogChecksum.word(header, 28, bigEndian: true))
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
    ///
    /// - returns: the index of the frame the scan stopped at, when it stopped
    ///   before the end of the file.
    @discardableResult
    func scan(_ visit: (Frame, UnsafeRawBufferPointer) throws -> Void, cutShort: (Int, Range<Int64>) throws -> Void) throws -> Int? {
        guard reader.size >= Int64(Self.headerSize) else { return nil }
        let frameSize = Self.frameHeaderSize + pageSize
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: frameSize, alignment: 16)
        defer { buffer.deallocate() }
        var chain = headerIsValid ? [headerChecksum] : [headerChecksum, computedHeaderChecksum]
        var salts = self.salts
        var bigEndianChecksums = self.bigEndianChecksums
        var index = 0
        var offset = Int64(Self.headerSize)
        while offset < reader.size {
            let got = try reader.read(into: buffer, at: offset)
            guard got == frameSize else {
                try cutShort(index, offset..<reader.size)
                return nil
            }
            let header = UnsafeRawBufferPointer(rebasing: buffer[0..<Self.frameHeaderSize])
            let page = UnsafeRawBufferPointer(rebasing: buffer[Self.frameHeaderSize...])
            let stored = (WriteAheadLogChecksum.word(header, 16, bigEndian: true), WriteAheadLogChecksum.word(header, 20, bigEndian: true))
            // After a damaged frame the chain goes on from its stored checksum
            // (its bytes were changed) or from the one computed (its stored
            // checksum was): whichever the next frame continues.
            let computed = chain.map { seed in
                WriteAheadLogChecksum.of(page[...], bigEndian: bigEndianChecksums,
                              seed: WriteAheadLogChecksum.of(header[0..<8], bigEndian: bigEndianChecksums, seed: seed))
            }
            var continues = computed.contains { $0 == stored }
            if index == 0, !headerIsValid, !continues {
                // The magic's byte order bit may be the damaged part.
                let other = [headerChecksum, otherOrderHeaderChecksum].map { seed in
                    WriteAheadLogChecksum.of(page[...], bigEndian: !bigEndianChecksums,
                                  seed: WriteAheadLogChecksum.of(header[0..<8], bigEndian: !bigEndianChecksums, seed: seed))
                }
                if other.contains(where: { $0 == stored }) {
                    bigEndianChecksums.toggle()
                    continues = true
                }
            }
            if index == 0, !headerIsValid, continues { salts = Array(header[8..<16]) }
            let saltsMatch = header[8..<16].elementsEqual(salts)
            guard saltsMatch || continues else { return index }
            let frame = Frame(index: index, pageNumber: WriteAheadLogChecksum.word(header, 0, bigEndian: true),
                              commitSize: WriteAheadLogChecksum.word(header, 4, bigEndian: true), offset: offset,
                              headerMatches: saltsMatch && continues)
            try visit(frame, page)
            chain = continues ? [stored] : [stored] + computed
            index += 1
            offset += Int64(frameSize)
        }
        return nil
    }

    /// The commit frames after frame `stop` (where a scan stopped) that
    /// carry the log's salts. A log is written from its start, every frame
    /// with its salts, so such a frame after one that has neither the salts
    /// nor the chain (a sector zeroed, say) is a commit of this log that
    /// SQLite will never read. Unless a writer is appending meanwhile: when
    /// `stop` carries the log's salts by the end of the count, it was being
    /// written over, and none counts.
    func commitsWithTheLogsSalts(after stop: Int) throws -> Int {
        let frameSize = Int64(Self.frameHeaderSize + pageSize)
        var commits = 0
        let stopOffset = Int64(Self.headerSize) + Int64(stop) * frameSize
        var offset = stopOffset + frameSize
        while offset + frameSize <= reader.size {
            let header = try reader.read(Self.frameHeaderSize, at: offset)
            if Array(header[8..<16]) == salts && WriteAheadLogChecksum.word(header, 4, bigEndian: true) != 0 { commits += 1 }
            offset += frameSize
        }
        let stopHeader = try reader.read(Self.frameHeaderSize, at: stopOffset)
        return stopHeader.count == Self.frameHeaderSize && Array(stopHeader[8..<16]) == salts ? 0 : commits
    }
}

/// Committed transactions in the `-wal` beside a database that SQLite would
/// not read: it stops reading a log at the first frame whose checksum or
/// salts do not continue the chain, and its next checkpoint drops the rest.
/// Found without a key, from the log's own header, salts and checksums.
///
/// Not damage: a log that ends inside its last frame, or whose chain breaks
/// with no commit after the break (a process killed while appending a
/// commit, or a transaction rolled back after it spilled to the log), and
/// frames left from an earlier log (other salts). A damaged last commit
/// cannot be told from a commit cut short: SQLite's reading (the log ends
/// there) is kept, and only a verification with the key tells.
public struct WriteAheadLogDamage: Sendable, Hashable, CustomStringConvertible {
    /// The first frame (from 0) SQLite would not read; nil when the log's
    /// header is damaged, so that SQLite reads none of it.
    public let frame: Int?
    /// The committed transactions from that point on that SQLite would drop.
    public let lostCommits: Int

    /// "frame 3 is damaged (2 committed transactions from there on would be lost)".
    public var description: String {
        let place = frame.map { "frame \($0) is damaged" } ?? "its header is damaged"
        return "\(place) (\(lostCommits) committed transaction\(lostCommits == 1 ? "" : "s") from there on would be lost)"
    }

    /// The damage of the `-wal` beside `databasePath`, or nil when there is
    /// no log or SQLite reads every committed transaction in it.
    ///
    /// - throws: ``SQLCipherFormatError/cannotRead(path:reason:)`` when the log cannot be read.
    public static func find(besideDatabaseAt databasePath: String) throws -> WriteAheadLogDamage? {
        let reader: SourceFile
        do {
            reader = try SourceFile(path: databasePath + "-wal")
        } catch SQLCipherFormatError.fileNotFound {
            return nil
        }
        let header = try reader.read(WriteAheadLog.headerSize, at: 0)
        guard header.count == WriteAheadLog.headerSize else { return nil }
        let stated = Int(WriteAheadLogChecksum.word(header, 8, bigEndian: true))
        let pageSize = stated == 1 ? 65536 : stated
        guard CipherSettings.pageSizes.contains(pageSize) else {
            // No frame can be told apart. With SQLite's magic, a log longer
            // than its header held some; without it (zeros after a power
            // loss, say) this is no log, and SQLite ignores it too.
            let frameSize = Int64(WriteAheadLog.frameHeaderSize + 512)
            let isLog = WriteAheadLogChecksum.word(header, 0, bigEndian: true) & ~1 == 0x377f_0682
            return isLog && reader.size >= Int64(WriteAheadLog.headerSize) + frameSize ? WriteAheadLogDamage(frame: nil, lostCommits: 1) : nil
        }
        let log = try WriteAheadLog(reader: reader, pageSize: pageSize)
        var chain = ChainBreak(headerIsValid: log.headerIsValid)
        if let stop = try log.scan({ frame, _ in chain.visit(frame) }, cutShort: { _, _ in }) {
            chain.stopped(at: stop, commitsAfter: try log.commitsWithTheLogsSalts(after: stop))
        }
        guard chain.losesCommits else { return nil }
        return WriteAheadLogDamage(frame: chain.lossFrame, lostCommits: chain.commitsLost)
    }
}

/// Where SQLite stops reading a log, fed its frames in order: the first
/// frame that breaks the chain (or the header, when it is damaged), and how
/// many commits follow that point, which SQLite would drop.
struct ChainBreak {
    let headerIsValid: Bool
    /// The first frame that breaks the chain, or -1 for a damaged header.
    private(set) var firstBroken: Int?
    /// Commit frames after that point, not counting a broken one itself.
    private(set) var commitsLost = 0

    init(headerIsValid: Bool) { self.headerIsValid = headerIsValid }

    mutating func visit(_ frame: WriteAheadLog.Frame) {
        if firstBroken == nil {
            if !headerIsValid {
                firstBroken = -1
                if frame.commitSize != 0 { commitsLost += 1 }
            } else if !frame.headerMatches {
                firstBroken = frame.index
            }
        } else if frame.commitSize != 0 {
            commitsLost += 1
        }
    }

    /// The scan stopped at frame `index`, neither its salts nor its chain
    /// this log's, with `commitsAfter` commits of this log after it.
    mutating func stopped(at index: Int, commitsAfter: Int) {
        guard commitsAfter > 0 else { return }
        if firstBroken == nil { firstBroken = index }
        commitsLost += commitsAfter
    }

    /// Whether SQLite would drop committed transactions.
    var losesCommits: Bool { firstBroken != nil && commitsLost > 0 }

    /// The first frame SQLite would not read; nil for a damaged header.
    var lossFrame: Int? { firstBroken.flatMap { $0 < 0 ? nil : $0 } }

}
