import Foundation

/// The committed frames of a database's WAL, read from a known point: what
/// a continuous backup ships, what a snapshot lays over the file, and what a
/// decryption applies. Only frames SQLite itself would read count (the
/// header's salts, a checksum that continues the chain) and only up to the
/// last commit frame among them: a transaction still being written is left
/// for the next reading.
package struct CommittedFrames {
    /// The frames, as SQLite wrote them: a 24-byte header and a page each.
    package var bytes: Data
    /// The log's header: one run of the log (SQLite starts it over with the
    /// next checkpoint sequence number and new salts).
    package var generation: WriteAheadLogHeader
    /// The index in the log of the first frame.
    package var firstFrame: Int
    package var frameCount: Int
    /// The chain's checksum before the first frame, and after the last.
    package var seed: (UInt32, UInt32)
    package var end: (UInt32, UInt32)
    /// For each commit frame, its index in `bytes` (from 0) and the database's size after it, in pages.
    package var commits: [(frame: Int, databasePages: UInt32)]

    /// The size of one frame: its header and a page.
    package var frameSize: Int { WriteAheadLogFrame.headerSize + generation.pageSize }

    /// The header of the log at `walPath`, or nil when there is no log, or
    /// it is empty or not a valid header.
    ///
    /// - throws: ``FileError`` when it cannot be read.
    package static func generation(of walPath: String) throws(FileError) -> WriteAheadLogHeader? {
        guard let start = try FileReader.start(of: walPath, count: WriteAheadLogHeader.size),
              let header = WriteAheadLogHeader(start), header.isValid else { return nil }
        return header
    }

    /// How many frames the log at `walPath` holds of `generation`, its
    /// transaction under way included: the log's end, found by a binary
    /// search on the frames' salts (reading a few headers, whatever the
    /// log's size). A log that started over leaves the older frames after
    /// its end in the file, with other salts: the file's size is only its
    /// high-water mark. 0 when the file is gone.
    ///
    /// - throws: ``FileError`` when the log cannot be read.
    package static func length(of walPath: String, generation: WriteAheadLogHeader) throws(FileError) -> Int {
        guard let reader = try FileReader.ifPresent(walPath) else { return 0 }
        let frameSize = WriteAheadLogFrame.headerSize + generation.pageSize
        var low = 0, high = max(0, Int((reader.size - Int64(WriteAheadLogHeader.size)) / Int64(frameSize)))
        // Frames before `low` are this log's; from `high` on they are not.
        while low < high {
            let middle = (low + high) / 2
            let header = try reader.read(WriteAheadLogFrame.headerSize, at: Int64(WriteAheadLogHeader.size) + Int64(middle) * Int64(frameSize))
            let ours = header.count == WriteAheadLogFrame.headerSize && header.withUnsafeBytes { WriteAheadLogFrame.hasSalts($0, generation.salts) }
            if ours { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The committed frames of `generation` in the log at `walPath` from
    /// frame `first` on, whose chain continues from `seed` (the header's
    /// checksum by default), up to the last commit once `limit` frames are
    /// read (a transaction is never cut): empty when no commit follows, or
    /// when the log is another generation by now. The log is read 1,024
    /// frames at a time, and no further than the first frame that is not
    /// this log's.
    ///
    /// - throws: ``FileError`` when the log cannot be read.
    package static func read(_ walPath: String, generation: WriteAheadLogHeader, from first: Int = 0, seed: (UInt32, UInt32)? = nil,
                             limit: Int = .max) throws(FileError) -> CommittedFrames {
        let seed = seed ?? generation.checksum
        var result = CommittedFrames(bytes: Data(), generation: generation, firstFrame: first, frameCount: 0, seed: seed, end: seed, commits: [])
        guard let reader = try FileReader.ifPresent(walPath) else { return result }
        let frameSize = result.frameSize
        let chunkFrames = 1024
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkFrames * frameSize, alignment: 16)
        defer { chunk.deallocate() }
        var frames = Data()
        var chain = seed
        var index = 0
        var committedLength = 0, committedChain = seed
        var commits: [(Int, UInt32)] = [], committed: [(Int, UInt32)] = []
        reading: while committed.isEmpty || index < limit {
            let got = try reader.read(into: chunk, at: Int64(WriteAheadLogHeader.size) + Int64(first + index) * Int64(frameSize))
            let whole = got / frameSize
            for at in 0..<whole {
                let frame = UnsafeRawBufferPointer(rebasing: chunk[at * frameSize..<(at + 1) * frameSize])
                guard let sum = WriteAheadLogFrame.continuing(frame, salts: generation.salts, seed: chain,
                                                              bigEndian: generation.bigEndianChecksums) else { break reading }
                chain = sum
                frames.append(contentsOf: frame)
                let commitSize = WriteAheadLogFrame.commitSize(frame)
                if commitSize != 0 {
                    commits.append((index, commitSize))
                    committed = commits
                    committedLength = frames.count
                    committedChain = chain
                }
                index += 1
                if index >= limit && !committed.isEmpty && commitSize != 0 { break reading }
            }
            if whole < chunkFrames { break }
        }
        // The header is read again: a log started over while it was read is read next time.
        guard try Self.generation(of: walPath) == generation else { return result }
        result.bytes = frames.prefix(committedLength)
        result.frameCount = committedLength / frameSize
        result.end = committedChain
        result.commits = committed
        return result
    }

    /// The chain's checksum after the first `count` frames, from ``seed``.
    package func chain(through count: Int) -> (UInt32, UInt32) {
        count == frameCount ? end : bytes.withUnsafeBytes {
            WriteAheadLogFrame.chain($0, frameSize: frameSize, count: count, seed: seed, bigEndian: generation.bigEndianChecksums)
        }
    }

    /// The pages of the first `count` frames (every frame by default), the
    /// latest frame of each page winning: where each page's image starts in
    /// ``bytes``, for the pages within the database's size after the last
    /// commit among them; and that size (nil when no commit is among them).
    package func latestPages(through count: Int? = nil) -> (pages: [UInt32: Int], databasePages: UInt32?) {
        let count = min(count ?? frameCount, frameCount)
        let size = commits.last(where: { $0.frame < count })?.databasePages
        var pages: [UInt32: Int] = [:]
        bytes.withUnsafeBytes { (frames: UnsafeRawBufferPointer) in
            for index in 0..<count {
                let page = WriteAheadLogFrame.pageNumber(UnsafeRawBufferPointer(rebasing: frames[index * frameSize..<(index + 1) * frameSize]))
                if size.map({ page <= $0 }) ?? true { pages[page] = index * frameSize + WriteAheadLogFrame.headerSize }
            }
        }
        return (pages, size)
    }
}
