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
    /// frame `first` on, whose chain continues from `seed`: empty when no
    /// commit follows, or when the log is another generation by now.
    static func read(_ walPath: String, generation: Generation, from first: Int, seed: (UInt32, UInt32)) throws -> CommittedFrames {
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
        let offset = Int64(32) + Int64(first) * Int64(frameSize)
        let available = max(0, Int((reader.size - offset) / Int64(frameSize)))
        // The rest of the log, read in one pass, then checked frame by frame in place.
        var frames = Data(count: available * frameSize)
        let got: Int
        do { got = try frames.withUnsafeMutableBytes { try reader.read(into: $0, at: offset) } } catch {
            throw BackupError.storageFailed(location: walPath, reason: "the database's log cannot be read: \(error)")
        }
        var committedLength = 0, committedChain = seed
        var committed: [(Int, UInt32)] = []
        frames.withUnsafeBytes { bytes in
            var chain = seed
            var commits: [(Int, UInt32)] = []
            let salts = generation.salts
            for index in 0..<got / frameSize {
                let frame = UnsafeRawBufferPointer(rebasing: bytes[index * frameSize..<(index + 1) * frameSize])
                guard salts.withUnsafeBytes({ memcmp($0.baseAddress!, frame.baseAddress! + 8, 8) == 0 }) else { break }
                let sum = WriteAheadLogChecksum.of(UnsafeRawBufferPointer(rebasing: frame[24...]), bigEndian: generation.bigEndianChecksums,
                                                   seed: WriteAheadLogChecksum.of(UnsafeRawBufferPointer(rebasing: frame[0..<8]),
                                                                                  bigEndian: generation.bigEndianChecksums, seed: chain))
                guard sum == (WriteAheadLogChecksum.word(frame, 16, bigEndian: true), WriteAheadLogChecksum.word(frame, 20, bigEndian: true)) else { break }
                chain = sum
                let commitSize = WriteAheadLogChecksum.word(frame, 4, bigEndian: true)
                if commitSize != 0 {
                    commits.append((index, commitSize))
                    committed = commits
                    committedLength = (index + 1) * frameSize
                    committedChain = chain
                }
            }
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
