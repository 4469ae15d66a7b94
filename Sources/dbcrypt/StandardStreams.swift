import Foundation
import DBCryptCore

/// Standard input and output (and files read as streams) with every read and
/// write checked: a directory given as input, a full disk or a closed pipe as
/// output is one sentence and exit status 1, never a crash, and lost output
/// never exits 0.
enum StandardStreams {
    /// The most a key, a passphrase or a key file may hold: far above any
    /// passphrase, so that `--key-file /dev/zero` ends at once.
    static let keyLimit = 64 * 1024

    /// The most standard input may hold for one sealed value or envelope.
    static let inputLimit = 64 * 1024 * 1024

    /// All of standard input, at most ``inputLimit`` bytes.
    ///
    /// - throws: ``CLIError`` naming the system's error, or saying that the
    ///   input is longer than the limit.
    static func readInput() throws -> Data {
        var bytes = try readAll(STDIN_FILENO, naming: "standard input", limit: inputLimit,
                                tooLong: "Standard input holds more than 64 MiB, more than one value to seal: give less.")
        defer { SecretBytes.wipe(&bytes) }
        return Data(bytes)
    }

    /// All of the key file at `path`, at most ``keyLimit`` bytes, read as a
    /// stream, so that a FIFO or a process substitution (`<(...)`) is read as
    /// `cat` would. The caller wipes the bytes.
    ///
    /// - throws: ``CLIError`` naming `what` and the system's error, or saying
    ///   that the file is longer than any key.
    static func readKeyFile(_ path: String, naming what: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CLIError("Cannot read \(what): \(String(cString: strerror(errno))).") }
        defer { close(fd) }
        return try readAll(fd, naming: what, limit: keyLimit,
                           tooLong: "\(what.prefix(1).uppercased())\(what.dropFirst()) holds more than 64 KiB, far more than any key: check that it names the key.")
    }

    /// Everything `fd` gives until its end, or an error once it has given
    /// more than `limit` bytes. The buffer grows by copies that are wiped,
    /// so no piece of a secret is left behind in freed memory.
    private static func readAll(_ fd: Int32, naming what: String, limit: Int, tooLong: String) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: min(limit + 1, 65536))
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
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if got < 0 {
                let failure = errno
                if failure == EINTR { continue }
                SecretBytes.wipe(&bytes)
                throw CLIError("Cannot read \(what): \(String(cString: strerror(failure))).")
            }
            if got == 0 {
                bytes.removeLast(bytes.count - count)
                return bytes
            }
            count += got
            if count > limit {
                SecretBytes.wipe(&bytes)
                throw CLIError(tooLong)
            }
        }
    }

    /// Writes all of `data` to standard output.
    ///
    /// - throws: ``CLIError`` naming the system's error (SIGPIPE is ignored,
    ///   so a closed pipe is EPIPE here).
    static func write(_ data: Data) throws {
        try data.withUnsafeBytes { bytes in
            var done = 0
            while done < bytes.count {
                let wrote = Foundation.write(STDOUT_FILENO, bytes.baseAddress! + done, bytes.count - done)
                if wrote < 0 {
                    if errno == EINTR { continue }
                    throw CLIError("Cannot write to standard output: \(String(cString: strerror(errno))).")
                }
                done += wrote
            }
        }
    }

    /// Writes a message for the user (not data) and a newline to standard
    /// output, with what it quotes that could drive a terminal escaped
    /// (``displayedLines(_:)``); its line breaks are kept.
    ///
    /// - throws: see ``write(_:)``.
    static func say(_ text: String) throws {
        try print(displayedLines(text))
    }

    /// Writes `text` and a newline to standard output.
    ///
    /// - throws: see ``write(_:)``.
    static func print(_ text: String) throws {
        try write(Data((text + "\n").utf8))
    }
}
