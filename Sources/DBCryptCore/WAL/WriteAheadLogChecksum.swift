/// SQLite's WAL checksum (https://sqlite.org/fileformat.html, section 4.1):
/// two 32-bit running sums over 8-byte steps, in the byte order the log's
/// magic number names. The log's header is summed from zero; each frame's
/// first 8 header bytes and its page continue from the frame before.
package enum WriteAheadLogChecksum {
    /// The checksum over `bytes` (a multiple of 8), from `seed`.
    package static func of<Bytes: Collection<UInt8>>(_ bytes: Bytes, bigEndian: Bool, seed: (UInt32, UInt32)) -> (UInt32, UInt32)
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
    package static func word<Bytes: Collection<UInt8>>(_ bytes: Bytes, _ at: Int, bigEndian: Bool) -> UInt32 where Bytes.Index == Int {
        let b0 = UInt32(bytes[at]), b1 = UInt32(bytes[at + 1]), b2 = UInt32(bytes[at + 2]), b3 = UInt32(bytes[at + 3])
        return bigEndian ? b0 << 24 | b1 << 16 | b2 << 8 | b3 : b3 << 24 | b2 << 16 | b1 << 8 | b0
    }

    /// The checksum over `bytes` (a multiple of 8), from `seed`: the same
    /// sums, read as whole words, for a log read in bulk.
    package static func of(_ bytes: UnsafeRawBufferPointer, bigEndian: Bool, seed: (UInt32, UInt32)) -> (UInt32, UInt32) {
        var (s0, s1) = seed
        var at = 0
        while at + 8 <= bytes.count {
            let a = bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)
            let b = bytes.loadUnaligned(fromByteOffset: at + 4, as: UInt32.self)
            s0 = s0 &+ (bigEndian ? UInt32(bigEndian: a) : UInt32(littleEndian: a)) &+ s1
            s1 = s1 &+ (bigEndian ? UInt32(bigEndian: b) : UInt32(littleEndian: b)) &+ s0
            at += 8
        }
        return (s0, s1)
    }
}
