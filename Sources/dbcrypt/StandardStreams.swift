import Foundation

/// Standard input and output (and files read as streams) with every read and
/// write checked: a directory given as input, a full disk or a closed pipe as
/// output is one sentence and exit status 1, never a crash, and lost output
/// never exits 0.
enum StandardStreams {
    /// All of standard input.
    ///
    /// - throws: ``CLIError`` naming the system's error.
    static func readInput() throws -> Data {
        Data(try readAll(STDIN_FILENO, naming: "standard input"))
    }

    /// All of the file at `path`, read as a stream, so that a FIFO or a
    /// process substitution (`<(...)`) is read as `cat` would.
    ///
    /// - throws: ``CLIError`` naming `what` and the system's error.
    static func readFile(_ path: String, naming what: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CLIError("Cannot read \(what): \(String(cString: strerror(errno))).") }
        defer { close(fd) }
        return try readAll(fd, naming: what)
    }

    /// Everything `fd` gives until its end.
    private static func readAll(_ fd: Int32, naming what: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        defer { buffer.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        while true {
            let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw CLIError("Cannot read \(what): \(String(cString: strerror(errno))).")
            }
            if got == 0 { return bytes }
            bytes.append(contentsOf: buffer[0..<got])
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

    /// Writes `text` and a newline to standard output.
    ///
    /// - throws: see ``write(_:)``.
    static func print(_ text: String) throws {
        try write(Data((text + "\n").utf8))
    }
}
