import Foundation

/// `.pager on`: a result longer than the terminal goes through `$PAGER`
/// (else `less -FRX`, else `more`, else nowhere), which reads it from a pipe: nothing is written to a
/// file (less is told to keep no history file either).
enum Pager {
    /// Shows `bytes` through the pager when they hold more lines than the
    /// terminal has rows, else writes them to `output`. The pager's
    /// environment lacks the variables named in `hiding` (those holding keys).
    ///
    /// - throws: ``ShellError`` when the pager cannot be started.
    static func show(_ bytes: [UInt8], else output: ShellOutput, hiding: Set<String>) throws {
        var size = winsize()
        let rows = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_row > 0 ? Int(size.ws_row) : 24
        guard bytes.reduce(0, { $0 + ($1 == 10 ? 1 : 0) }) >= rows - 1 else { return try output.write(bytes) }
        let environment = ProcessInfo.processInfo.environment
        let path = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        func installed(_ program: String) -> Bool { path.contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(program)") } }
        guard let command = environment["PAGER"].flatMap({ $0.isEmpty ? nil : $0 })
                ?? (installed("less") ? "less -FRX" : installed("more") ? "more" : nil) else {
            return try output.write(bytes)   // no pager on this system: the rows as they are
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.environment = environment.filter { !hiding.contains($0.key) }.merging(["LESSHISTFILE": "-"]) { $1 }
        let input = Pipe()
        process.standardInput = input
        do {
            try process.run()
        } catch {
            throw ShellError("Cannot start the pager (\(command)): \(error.localizedDescription). Set PAGER, or .pager off.")
        }
        // A pager quit before the end closes the pipe: the rest is not wanted (EPIPE, SIGPIPE ignored).
        _ = bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(input.fileHandleForWriting.fileDescriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { break }
                offset += written
            }
        }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
