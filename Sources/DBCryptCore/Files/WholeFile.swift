#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file or a stream read whole, up to a bound, into memory that is wiped:
/// the one place a whole file is read. The buffer grows by copies, each old
/// one wiped, so no piece of a secret (a key file, a credential, a value to
/// seal) is left in freed memory; a source longer than the bound stops at
/// once (`--key-file /dev/zero` ends).
package enum WholeFile {
    /// All of the stream `fd` (standard input, a pipe, a FIFO, a file),
    /// read until its end; `path` names it in errors.
    ///
    /// - throws: ``FileError/tooLarge(path:limit:)`` past `limit` bytes, or
    ///   ``FileError/system(path:reason:)`` in the system's words.
    package static func read(_ fd: Int32, naming path: String, limit: Int) throws(FileError) -> SecretBytes {
        try read(naming: path, limit: limit) { buffer, _ in readStream(fd, buffer) }
    }

    /// All of the file or stream at `path`, opened as `cat` opens it: a FIFO
    /// or a process substitution (`<(...)`) is read to its end.
    ///
    /// - throws: see ``read(_:naming:limit:)``.
    package static func read(streamAt path: String, limit: Int) throws(FileError) -> SecretBytes {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .system(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        return try read(fd, naming: path, limit: limit)
    }

    /// Everything `next` gives until it gives 0: `next(buffer, offset)`
    /// fills the start of `buffer` with the bytes at `offset` and returns
    /// how many, or -1 with `errno` set.
    static func read(naming path: String, limit: Int,
                     _ next: (UnsafeMutableRawBufferPointer, Int64) -> Int) throws(FileError) -> SecretBytes {
        var bytes = [UInt8](repeating: 0, count: min(limit + 1, 65536))
        defer { SecretBytes.wipe(&bytes) }
        var count = 0
        while true {
            if count == bytes.count {
                var larger = [UInt8](repeating: 0, count: min(bytes.count * 2, limit + 1))
                larger.withUnsafeMutableBytes { target in
                    bytes.withUnsafeBytes { target.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                }
                SecretBytes.wipe(&bytes)
                bytes = larger
            }
            let got = bytes.withUnsafeMutableBytes { next(UnsafeMutableRawBufferPointer(rebasing: $0[count...]), Int64(count)) }
            if got < 0 {
                if errno == EINTR { continue }
                throw .system(path: path, reason: String(cString: strerror(errno)))
            }
            if got == 0 {
                return SecretBytes(count: count) { target in
                    bytes.withUnsafeBytes { target.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                }
            }
            count += got
            if count > limit { throw .tooLarge(path: path, limit: limit) }
        }
    }
}

/// `read(2)` on `fd` into `buffer`.
private func readStream(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
    read(fd, buffer.baseAddress!, buffer.count)
}

extension FileReader {
    /// All of the file, at most `limit` bytes, into memory that is wiped.
    ///
    /// - throws: ``FileError/tooLarge(path:limit:)``, or
    ///   ``FileError/system(path:reason:)`` on an I/O error.
    package func readAll(limit: Int) throws(FileError) -> SecretBytes {
        try WholeFile.read(naming: path, limit: limit) { buffer, offset in
            (try? read(into: buffer, at: offset)) ?? -1
        }
    }
}
