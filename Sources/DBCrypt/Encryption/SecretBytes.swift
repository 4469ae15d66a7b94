#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bytes of a secret, in memory DBCrypt allocated itself, zeroed before
/// that memory is released. Immutable after creation.
final class SecretBytes: @unchecked Sendable {
    // @unchecked: the buffer is written only in init and read-only afterwards.
    private let buffer: UnsafeMutableRawBufferPointer

    /// Copies `bytes`.
    init(_ bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        buffer = .allocate(byteCount: max(array.count, 1), alignment: 1)
        buffer.copyBytes(from: array)
        count = array.count
        // The temporary array may sit in memory we do not own afterwards: wipe it too.
        var scratch = array
        scratch.withUnsafeMutableBytes { Self.wipe($0) }
    }

    /// The number of secret bytes.
    let count: Int

    deinit {
        Self.wipe(buffer)
        buffer.deallocate()
    }

    /// Calls `body` with the bytes; they must not escape it.
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// Zeroes memory in a way the optimizer may not remove.
    static func wipe(_ bytes: UnsafeMutableRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        #if canImport(Glibc)
        explicit_bzero(base, bytes.count)
        #else
        _ = memset_s(base, bytes.count, 0, bytes.count)
        #endif
    }
}
