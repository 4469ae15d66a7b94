import CPrimitives

/// Bytes of a secret, in memory this object allocated itself, wiped before
/// that memory is released. Immutable after creation: safe to share.
package final class SecretBytes: @unchecked Sendable {
    // @unchecked: the buffer is written only in init and read-only afterwards.
    private let buffer: UnsafeMutableRawBufferPointer

    /// The number of secret bytes.
    package let count: Int

    /// Copies `bytes` straight into memory this object owns, so no
    /// intermediate copy is left behind unwiped.
    package init(_ bytes: some Sequence<UInt8>) {
        var capacity = max(bytes.underestimatedCount, 32)
        var storage = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
        var count = 0
        for byte in bytes {
            if count == capacity {
                capacity *= 2
                let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
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

    /// `count` bytes that `initialize` writes straight into memory this
    /// object owns (it is given them zeroed), so that no copy of them is
    /// made anywhere else.
    package init(count: Int, initializingWith initialize: (UnsafeMutableRawBufferPointer) -> Void) {
        buffer = .allocate(byteCount: max(count, 1), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        self.count = count
        initialize(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
    }

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
        dbcrypt_wipe(bytes.baseAddress, bytes.count)
    }

    /// Zeroes an array's bytes in place: for a temporary copy of a secret.
    package static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { wipe($0) }
    }
}
