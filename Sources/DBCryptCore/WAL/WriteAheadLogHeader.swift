/// The 32-byte header of a `-wal` file as SQLite writes it
/// (https://sqlite.org/fileformat.html, section 4.1): the one place it is
/// parsed. Big-endian words: the magic (its low bit names the checksums'
/// byte order), the format version, the page size, the checkpoint sequence
/// number, two salts, and the checksum of the first 24 bytes, which seeds
/// the chain of the log's frames.
package struct WriteAheadLogHeader: Equatable, Sendable {
    /// Bytes in the header.
    package static let size = 32
    /// The magic number, without its byte-order bit.
    package static let magic: UInt32 = 0x377f_0682
    /// The only format version SQLite writes and reads.
    package static let version: UInt32 = 3_007_000

    /// Whether the first word is SQLite's magic number, in either byte order.
    package let hasMagic: Bool
    /// Whether the frames' checksums are summed as big-endian words.
    package let bigEndianChecksums: Bool
    /// Whether the version is SQLite's.
    package let hasVersion: Bool
    /// The page size the header states (65,536 whether it states 65,536 or 1).
    package let pageSize: Int
    /// Incremented by each checkpoint that starts the log over.
    package let checkpointSequence: UInt32
    /// The two salts, 8 bytes: every frame of this log carries them.
    package let salts: [UInt8]
    /// The checksum the header stores: the chain's seed for frame 0.
    package let checksum: (UInt32, UInt32)
    /// The checksum its first 24 bytes give, in the stated byte order, and in the other.
    package let computedChecksum: (UInt32, UInt32), otherOrderChecksum: (UInt32, UInt32)

    /// The header in the first 32 bytes of `bytes`; nil when there are fewer.
    package init?<Bytes: Collection<UInt8>>(_ bytes: Bytes) where Bytes.Index == Int {
        guard bytes.count >= Self.size else { return nil }
        let header = Array(bytes.prefix(Self.size))
        func word(_ at: Int) -> UInt32 { WriteAheadLogChecksum.word(header, at, bigEndian: true) }
        hasMagic = word(0) & ~1 == Self.magic
        bigEndianChecksums = word(0) & 1 == 1
        hasVersion = word(4) == Self.version
        pageSize = word(8) == 1 ? 65536 : Int(word(8))
        checkpointSequence = word(12)
        salts = Array(header[16..<24])
        checksum = (word(24), word(28))
        computedChecksum = WriteAheadLogChecksum.of(header[0..<24], bigEndian: bigEndianChecksums, seed: (0, 0))
        otherOrderChecksum = WriteAheadLogChecksum.of(header[0..<24], bigEndian: !bigEndianChecksums, seed: (0, 0))
    }

    /// Whether SQLite reads a log with this header: its magic, its version,
    /// and a checksum that matches its bytes. (Whether the page size is the
    /// database's is the caller's to check.)
    package var isValid: Bool { hasMagic && hasVersion && computedChecksum == checksum }

    /// Whether SQLite started this log over from `previous`: the next
    /// checkpoint sequence number, and the first salt plus one.
    package func follows(_ previous: WriteAheadLogHeader) -> Bool {
        Self.follows(checkpointSequence: checkpointSequence, salts: salts, previous: (previous.checkpointSequence, previous.salts))
    }

    /// The same, from a backup record's fields.
    package static func follows(checkpointSequence: UInt32, salts: [UInt8], previous: (UInt32, [UInt8])) -> Bool {
        guard salts.count == 8, previous.1.count == 8 else { return false }
        let salt1 = WriteAheadLogChecksum.word(salts, 0, bigEndian: true), previousSalt1 = WriteAheadLogChecksum.word(previous.1, 0, bigEndian: true)
        return checkpointSequence == previous.0 &+ 1 && salt1 == previousSalt1 &+ 1
    }

    package static func == (a: WriteAheadLogHeader, b: WriteAheadLogHeader) -> Bool {
        a.hasMagic == b.hasMagic && a.bigEndianChecksums == b.bigEndianChecksums && a.hasVersion == b.hasVersion
            && a.pageSize == b.pageSize && a.checkpointSequence == b.checkpointSequence && a.salts == b.salts
            && a.checksum == b.checksum && a.computedChecksum == b.computedChecksum
    }
}
