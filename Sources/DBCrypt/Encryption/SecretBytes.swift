#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bytes of a secret, in memory DBCrypt allocated itself, zeroed before
/// that memory is released. Immutable after creation.
package final class SecretBytes: @unchecked Sendable {
    // @unchecked: the buffer is written only in init and read-only afterwards.
    private let buffer: UnsafeMutableRawBufferPointer

    /// Copies `bytes` straight into memory this object owns, so no
    /// intermediate copy is left behind unwiped.
    package init(_ bytes: some Sequence<UInt8>) {
        var capacity = max(bytes.underestimatedCount, 32)
        var storage = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 1)
        var count = 0
        for byte in bytes {
            if count == capacity {
                capacity *= 2
                let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 1)
                larger.copyMemory(from: UnsafeRawBufferPointer(storage))
                Self.wipe(storage)
                storage.deallocate()
                storage = larger
            }
            storage[count] = byte
            count += 1
        }
        buffer = storage
        self.count = count
    }

    /// The number of secret bytes.
    package let count: Int

    deinit {
        Self.wipe(buffer)
        buffer.deallocate()
    }

    /// Calls `body` with the bytes; they must not escape it.
    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// Zeroes memory in a way the optimizer may not remove.
    package static func wipe(_ bytes: UnsafeMutableRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        #if canImport(Glibc)
        explicit_bzero(base, bytes.count)
        #else
        _ = memset_s(base, bytes.count, 0, bytes.count)
        #endif
    }
}
