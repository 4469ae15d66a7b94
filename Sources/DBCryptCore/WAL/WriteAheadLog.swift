/// A `-wal` file as SQLite writes it (https://sqlite.org/fileformat.html,
/// section 4): a 32-byte header, then frames of a 24-byte header and one
/// page image each, chained by a running checksum. SQLCipher writes the page
/// images encrypted, exactly as it writes them to the database file.
package struct WriteAheadLog {
    /// One frame whose salts match the log's header: part of the current log.
    package struct Frame {
        /// Its position in the log, from 0.
        package let index: Int
        /// The page it holds.
        package let pageNumber: UInt32
        /// For a commit frame, the database's size in pages after the commit; else 0.
        package let commitSize: UInt32
        /// Where the frame (its header) starts in the file.
        package let offset: Int64
        /// Whether its checksum continues the chain and its salts are the
        /// header's, as SQLite requires of every frame it reads.
        package let headerMatches: Bool
    }

    package let reader: FileReader
    package let pageSize: Int
    /// The header, as far as the file holds one.
    private let header: WriteAheadLogHeader?
    /// Whether the header is SQLite's, for pages of ``pageSize``.
    package let headerIsValid: Bool

    /// The log beside `databasePath`, or nil when there is none or it is empty.
    ///
    /// - throws: ``FileError`` when it cannot be read.
    package static func beside(_ databasePath: String, pageSize: Int) throws(FileError) -> WriteAheadLog? {
        guard let reader = try FileReader.ifPresent(CompanionFile.wal.path(of: databasePath)), reader.size > 0 else { return nil }
        return try WriteAheadLog(reader: reader, pageSize: pageSize)
    }

    package init(reader: FileReader, pageSize: Int) throws(FileError) {
        self.reader = reader
        self.pageSize = pageSize
        header = WriteAheadLogHeader(try reader.read(WriteAheadLogHeader.size, at: 0))
        headerIsValid = header.map { $0.isValid && $0.pageSize == pageSize } ?? false
    }

    /// The size of one frame: its header and a page.
    package var frameSize: Int { WriteAheadLogFrame.headerSize + pageSize }

    /// The bytes of frame `index`'s page image.
    package func pageRange(of frame: Frame) -> Range<Int64> {
        let start = frame.offset + Int64(WriteAheadLogFrame.headerSize)
        return start..<start + Int64(pageSize)
    }

    /// The bytes of frame `index`, header and page.
    package func byteRange(ofFrame index: Int) -> Range<Int64> {
        let start = Int64(WriteAheadLogHeader.size) + Int64(index) * Int64(frameSize)
        return start..<start + Int64(frameSize)
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
    package func scan(_ visit: (Frame, UnsafeRawBufferPointer) throws -> Void, cutShort: (Int, Range<Int64>) throws -> Void) throws -> Int? {
        guard let header else { return nil }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: frameSize, alignment: 16)
        defer { buffer.deallocate() }
        var chain = headerIsValid ? [header.checksum] : [header.checksum, header.computedChecksum]
        var salts = header.salts
        var bigEndian = header.bigEndianChecksums
        var index = 0
        var offset = Int64(WriteAheadLogHeader.size)
        while offset < reader.size {
            let got = try reader.read(into: buffer, at: offset)
            guard got == frameSize else {
                try cutShort(index, offset..<reader.size)
                return nil
            }
            let frame = UnsafeRawBufferPointer(buffer)
            let stored = WriteAheadLogFrame.storedChecksum(frame)
            // After a damaged frame the chain goes on from its stored checksum
            // (its bytes were changed) or from the one computed (its stored
            // checksum was): whichever the next frame continues.
            let computed = chain.map { WriteAheadLogFrame.checksum(frame, seed: $0, bigEndian: bigEndian) }
            var continues = computed.contains { $0 == stored }
            if index == 0, !headerIsValid, !continues {
                // The magic's byte order bit may be the damaged part.
                let other = [header.checksum, header.otherOrderChecksum].map { WriteAheadLogFrame.checksum(frame, seed: $0, bigEndian: !bigEndian) }
                if other.contains(where: { $0 == stored }) {
                    bigEndian.toggle()
                    continues = true
                }
            }
            if index == 0, !headerIsValid, continues { salts = Array(frame[8..<16]) }
            let saltsMatch = WriteAheadLogFrame.hasSalts(frame, salts)
            guard saltsMatch || continues else { return index }
            try visit(Frame(index: index, pageNumber: WriteAheadLogFrame.pageNumber(frame), commitSize: WriteAheadLogFrame.commitSize(frame),
                            offset: offset, headerMatches: saltsMatch && continues),
                      UnsafeRawBufferPointer(rebasing: frame[WriteAheadLogFrame.headerSize...]))
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
    package func commitsWithTheLogsSalts(after stop: Int) throws(FileError) -> Int {
        guard let salts = header?.salts else { return 0 }
        func hasSalts(_ frameHeader: [UInt8]) -> Bool {
            frameHeader.count == WriteAheadLogFrame.headerSize && Array(frameHeader[8..<16]) == salts
        }
        var commits = 0
        var index = stop + 1
        while byteRange(ofFrame: index).upperBound <= reader.size {
            let frameHeader = try reader.read(WriteAheadLogFrame.headerSize, at: byteRange(ofFrame: index).lowerBound)
            if hasSalts(frameHeader) && WriteAheadLogChecksum.word(frameHeader, 4, bigEndian: true) != 0 { commits += 1 }
            index += 1
        }
        return hasSalts(try reader.read(WriteAheadLogFrame.headerSize, at: byteRange(ofFrame: stop).lowerBound)) ? 0 : commits
    }

    /// Authenticates the frames SQLite would read from the log beside
    /// `databasePath` (up to its last commit, before any break in the chain)
    /// with `cipher`: frames that do not authenticate mean the log is
    /// another database's, or changed. Frames after the last commit do not
    /// count: a writer may be appending them.
    ///
    /// - returns: how many frames authenticate, and those that do not.
    /// - throws: ``FileError`` when the log cannot be read.
    package static func authenticate(besideDatabaseAt databasePath: String, with cipher: PageCipher) throws -> (authenticated: Int, failing: [Frame]) {
        guard cipher.authenticates, let log = try beside(databasePath, pageSize: cipher.layout.pageSize), log.headerIsValid else { return (0, []) }
        var results: [(frame: Frame, authentic: Bool)] = []
        var lastCommit = -1
        var broken = false
        try log.scan({ frame, page in
            guard !broken else { return }
            guard frame.headerMatches else { broken = true; return }
            if frame.commitSize != 0 { lastCommit = frame.index }
            results.append((frame, cipher.authenticates(page, number: frame.pageNumber)))
        }, cutShort: { _, _ in })
        let read = results.filter { $0.frame.index <= lastCommit }
        return (read.filter(\.authentic).count, read.filter { !$0.authentic }.map(\.frame))
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

    /// Damage from its parts.
    public init(frame: Int?, lostCommits: Int) {
        self.frame = frame
        self.lostCommits = lostCommits
    }

    /// "frame 3 is damaged (2 committed transactions from there on would be lost)".
    public var description: String {
        let place = frame.map { "frame \($0) is damaged" } ?? "its header is damaged"
        return "\(place) (\(lostCommits) committed transaction\(lostCommits == 1 ? "" : "s") from there on would be lost)"
    }

    /// The damage of the `-wal` beside `databasePath`, or nil when there is
    /// no log or SQLite reads every committed transaction in it.
    ///
    /// - throws: ``FileError`` when the log cannot be read.
    package static func search(besideDatabaseAt databasePath: String) throws -> WriteAheadLogDamage? {
        guard let reader = try FileReader.ifPresent(CompanionFile.wal.path(of: databasePath)),
              let header = WriteAheadLogHeader(try reader.read(WriteAheadLogHeader.size, at: 0)) else { return nil }
        guard CipherSettings.pageSizes.contains(header.pageSize) else {
            // No frame can be told apart. With SQLite's magic, a log longer
            // than its header held some; without it (zeros after a power
            // loss, say) this is no log, and SQLite ignores it too.
            let smallestFrame = Int64(WriteAheadLogHeader.size + WriteAheadLogFrame.headerSize + 512)
            return header.hasMagic && reader.size >= smallestFrame ? WriteAheadLogDamage(frame: nil, lostCommits: 1) : nil
        }
        let log = try WriteAheadLog(reader: reader, pageSize: header.pageSize)
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
private struct ChainBreak {
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
