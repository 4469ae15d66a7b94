import DBCryptCore
import Foundation

/// The committed frames of a database's WAL, read after a known point: what
/// a continuous backup ships. Only frames SQLite itself would read count
/// (the header's salts, a checksum that continues the chain) and only up to
/// the last commit frame among them: a transaction still being written is
/// left for the next reading.
struct CommittedFrames {
    /// The log's header fields that identify one run of it: SQLite starts
    /// the log over with the next checkpoint sequence number and new salts.
    struct Generation: Equatable {
        var checkpointSequence: UInt32
        var salts: [UInt8]
        var bigEndianChecksums: Bool
        /// The header's checksum: the chain's seed for its first frame.
        var headerChecksum: (UInt32, UInt32)
        var pageSize: Int

        /// Whether SQLite started this log over from `previous`: the next
        /// checkpoint sequence number, and the first salt plus one.
        func follows(_ previous: Generation) -> Bool {
            Self.follows(checkpointSequence: checkpointSequence, salts: salts, previous: (previous.checkpointSequence, previous.salts))
        }

        /// The same, from a record's fields.
        static func follows(checkpointSequence: UInt32, salts: [UInt8], previous: (UInt32, [UInt8])) -> Bool {
            guard salts.count == 8, previous.1.count == 8 else { return false }
            let salt1 = WriteAheadLogChecksum.word(salts, 0, bigEndian: true), previousSalt1 = WriteAheadLogChecksum.word(previous.1, 0, bigEndian: true)
            return checkpointSequence == previous.0 &+ 1 && salt1 == previousSalt1 &+ 1
        }

        static func == (a: Generation, b: Generation) -> Bool {
            a.checkpointSequence == b.checkpointSequence && a.salts == b.salts && a.bigEndianChecksums == b.bigEndianChecksums
                && a.headerChecksum == b.headerChecksum && a.pageSize == b.pageSize
        }
    }

    /// The frames, as SQLite wrote them: a 24-byte header and a page each.
    var bytes: Data
    var generation: Generation
    /// The index in the log of the first frame.
    var firstFrame: Int
    var frameCount: Int
    /// The chain's checksum before the first frame, and after the last.
    var seed: (UInt32, UInt32)
    var end: (UInt32, UInt32)
    /// For each commit frame, its index in `bytes` (from 0) and the database's size after it, in pages.
    var commits: [(frame: Int, databasePages: UInt32)]

    /// The log's header, or nil when there is no log, or it is empty or not a valid header.
    static func generation(of walPath: String) throws -> Generation? {
        guard let header = try start(of: walPath, count: 32), header.count == 32 else { return nil }
        let magic = WriteAheadLogChecksum.word(header, 0, bigEndian: true)
        guard magic & ~1 == 0x377f_0682 else { return nil }
        let bigEndian = magic & 1 == 1
        let stored = (WriteAheadLogChecksum.word(header, 24, bigEndian: true), WriteAheadLogChecksum.word(header, 28, bigEndian: true))
        guard WriteAheadLogChecksum.of(header[0..<24], bigEndian: bigEndian, seed: (0, 0)) == stored else { return nil }
        let size = Int(WriteAheadLogChecksum.word(header, 8, bigEndian: true))
        return Generation(checkpointSequence: WriteAheadLogChecksum.word(header, 12, bigEndian: true), salts: Array(header[16..<24]),
                          bigEndianChecksums: bigEndian, headerChecksum: stored, pageSize: size == 1 ? 65536 : size)
    }

    /// The committed frames of `generation` in the log at `walPath` from
    /// frame `first` on, whose chain continues from `seed`, up to the last
    /// commit once `limit` frames are read (a transaction is never cut):
    /// empty when no commit follows, or when the log is another generation
    /// by now. The log is read 1,024 frames at a time, and no further than
    /// the first frame that is not this log's.
    static func read(_ walPath: String, generation: Generation, from first: Int, seed: (UInt32, UInt32),
                     limit: Int = .max) throws -> CommittedFrames {
        var result = CommittedFrames(bytes: Data(), generation: generation, firstFrame: first, frameCount: 0, seed: seed, end: seed, commits: [])
        let reader: FileReader
        do {
            reader = try FileReader(path: walPath)
        } catch .notFound {
            return result
        } catch {
            throw BackupError.storageFailed(location: walPath, reason: "the database's log cannot be read: \(error)")
        }
        let frameSize = BackupRecord.frameHeaderSize + generation.pageSize
        let chunkFrames = 1024
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkFrames * frameSize, alignment: 16)
        defer { chunk.deallocate() }
        var frames = Data()
        var chain = seed
        var index = 0
        var committedLength = 0, committedChain = seed
        var commits: [(Int, UInt32)] = [], committed: [(Int, UInt32)] = []
        reading: while committed.isEmpty || index < limit {
            let offset = Int64(32) + Int64(first + index) * Int64(frameSize)
            let got: Int
            do { got = try reader.read(into: chunk, at: offset) } catch {
                throw BackupError.storageFailed(location: walPath, reason: "the database's log cannot be read: \(error)")
            }
            let whole = got / frameSize
            for at in 0..<whole {
                let frame = UnsafeRawBufferPointer(rebasing: chunk[at * frameSize..<(at + 1) * frameSize])
                guard generation.salts.withUnsafeBytes({ memcmp($0.baseAddress!, frame.baseAddress! + 8, 8) == 0 }) else { break reading }
                let sum = WriteAheadLogChecksum.of(UnsafeRawBufferPointer(rebasing: frame[24...]), bigEndian: generation.bigEndianChecksums,
                                                   seed: WriteAheadLogChecksum.of(UnsafeRawBufferPointer(rebasing: frame[0..<8]),
                                                                                  bigEndian: generation.bigEndianChecksums, seed: chain))
                guard sum == (WriteAheadLogChecksum.word(frame, 16, bigEndian: true), WriteAheadLogChecksum.word(frame, 20, bigEndian: true)) else { break reading }
                chain = sum
                frames.append(contentsOf: frame)
                let commitSize = WriteAheadLogChecksum.word(frame, 4, bigEndian: true)
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

    private static func start(of path: String, count: Int) throws -> [UInt8]? {
        do {
            return try FileReader.start(of: path, count: count)
        } catch {
            throw BackupError.storageFailed(location: path, reason: "the database's log cannot be read: \(error)")
        }
    }
}
