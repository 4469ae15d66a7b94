import Dispatch
import Synchronization

/// Writes a file a window at a time on a thread of its own, so that the
/// next window is decrypted while the kernel copies this one: two buffers
/// take turns, one being filled while the other is written.
final class WindowWriter: @unchecked Sendable {
    // @unchecked: each buffer is used by one thread at a time, handed over
    // through `free` and `queue`.
    private let file: FileWriter
    private let buffers: [UnsafeMutableRawBufferPointer]
    private var next = 0
    private let free: DispatchSemaphore
    private let queue = DispatchQueue(label: "SQLCipherFormat.WindowWriter")
    private let failure = Mutex<(any Error)?>(nil)

    /// Writes into `file`, in windows of up to `windowBytes`.
    init(_ file: FileWriter, windowBytes: Int) {
        self.file = file
        buffers = (0..<2).map { _ in UnsafeMutableRawBufferPointer.allocate(byteCount: windowBytes, alignment: 16) }
        // Made at 0 and signalled up: Dispatch traps when a semaphore is
        // released below the value it was made with, which a buffer taken
        // and never submitted (decryption failed in between) would leave.
        free = DispatchSemaphore(value: 0)
        for _ in buffers { free.signal() }
    }

    // Every block submitted holds `self`: none is left to wait for here.
    deinit { buffers.forEach { $0.deallocate() } }

    /// A buffer to fill, once one is free; hand it back with ``submit(_:)``.
    ///
    /// - throws: the ``SQLCipherFormatError/cannotWrite(path:reason:)`` of an earlier window.
    func buffer() throws -> UnsafeMutableRawBufferPointer {
        free.wait()
        if let error = failure.withLock({ $0 }) {
            free.signal()
            throw error
        }
        return buffers[next]
    }

    /// Writes the first `count` bytes of the buffer ``buffer()`` gave, after
    /// the windows submitted before it; 0 gives it back unwritten.
    func submit(_ count: Int) {
        let index = next
        next = (next + 1) % buffers.count
        queue.async {
            if count > 0, self.failure.withLock({ $0 }) == nil {
                do throws(FileError) {
                    try self.file.write(UnsafeRawBufferPointer(rebasing: self.buffers[index][0..<count]))
                } catch {
                    self.failure.withLock { $0 = SQLCipherFormatError(writing: error) }
                }
            }
            self.free.signal()
        }
    }

    /// Waits for every window, then flushes the file to the disk and closes it.
    ///
    /// - throws: ``SQLCipherFormatError/cannotWrite(path:reason:)``.
    func finish() throws {
        queue.sync {}
        if let error = failure.withLock({ $0 }) { throw error }
        do throws(FileError) { try file.finish() } catch { throw SQLCipherFormatError(writing: error) }
    }

    /// Waits for every window, then undoes the writing (``FileWriter/discard()``).
    func discard() {
        queue.sync {}
        file.discard()
    }
}
