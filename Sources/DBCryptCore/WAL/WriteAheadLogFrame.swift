/// One frame of a `-wal` file (https://sqlite.org/fileformat.html, section
/// 4.1): a 24-byte header, then one page image as SQLCipher wrote it
/// (encrypted). The header's big-endian words: the page number, the
/// database's size in pages after the commit (for a commit frame; else 0),
/// the log's two salts, and the chain's checksum after this frame.
package enum WriteAheadLogFrame {
    /// Bytes in a frame's header.
    package static let headerSize = 24

    /// The page the frame at the start of `frame` holds.
    package static func pageNumber(_ frame: UnsafeRawBufferPointer) -> UInt32 {
        WriteAheadLogChecksum.word(frame, 0, bigEndian: true)
    }

    /// The database's size in pages after the commit of the frame at the start of `frame`, or 0 when it commits nothing.
    package static func commitSize(_ frame: UnsafeRawBufferPointer) -> UInt32 {
        WriteAheadLogChecksum.word(frame, 4, bigEndian: true)
    }

    /// Whether the frame at the start of `frame` carries `salts` (8 bytes).
    package static func hasSalts(_ frame: UnsafeRawBufferPointer, _ salts: [UInt8]) -> Bool {
        salts.count == 8 && frame[8..<16].elementsEqual(salts)
    }

    /// The checksum the frame at the start of `frame` stores.
    package static func storedChecksum(_ frame: UnsafeRawBufferPointer) -> (UInt32, UInt32) {
        (WriteAheadLogChecksum.word(frame, 16, bigEndian: true), WriteAheadLogChecksum.word(frame, 20, bigEndian: true))
    }

    /// The chain's checksum after `frame` (a whole frame: its header and a
    /// page of `frame.count - headerSize` bytes), continued from `seed`: the
    /// sums over the header's first 8 bytes, then over the page. The one
    /// definition of the chain; a frame continues the log when this equals
    /// ``storedChecksum(_:)`` and it carries the log's salts.
    package static func checksum(_ frame: UnsafeRawBufferPointer, seed: (UInt32, UInt32), bigEndian: Bool) -> (UInt32, UInt32) {
        let afterHeader = WriteAheadLogChecksum.of(UnsafeRawBufferPointer(rebasing: frame[0..<8]), bigEndian: bigEndian, seed: seed)
        return WriteAheadLogChecksum.of(UnsafeRawBufferPointer(rebasing: frame[headerSize...]), bigEndian: bigEndian, seed: afterHeader)
    }

    /// The chain's checksum after `frame` when it continues the log whose
    /// salts are `salts` from `seed`; nil when its salts or its checksum are not that log's.
    package static func continuing(_ frame: UnsafeRawBufferPointer, salts: [UInt8], seed: (UInt32, UInt32), bigEndian: Bool) -> (UInt32, UInt32)? {
        guard hasSalts(frame, salts) else { return nil }
        let sum = checksum(frame, seed: seed, bigEndian: bigEndian)
        return sum == storedChecksum(frame) ? sum : nil
    }

    /// The chain's checksum after the first `count` whole frames of
    /// `frames` (frames of `frameSize` bytes, back to back), from `seed`.
    package static func chain(_ frames: UnsafeRawBufferPointer, frameSize: Int, count: Int, seed: (UInt32, UInt32), bigEndian: Bool) -> (UInt32, UInt32) {
        var sum = seed
        for index in 0..<min(count, frames.count / frameSize) {
            sum = checksum(UnsafeRawBufferPointer(rebasing: frames[index * frameSize..<(index + 1) * frameSize]), seed: sum, bigEndian: bigEndian)
        }
        return sum
    }
}
