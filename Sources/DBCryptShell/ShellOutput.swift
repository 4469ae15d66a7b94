import DBCryptCore
import Foundation

/// Where the shell writes rows: standard output, or a file named by
/// `.output` or `.once` (created mode 0600: what goes there is plaintext).
final class ShellOutput: Sendable {
    let descriptor: Int32
    /// The file's path, nil for standard output.
    let path: String?

    /// Standard output (one for every session).
    static let standardOutput = ShellOutput(descriptor: STDOUT_FILENO, path: nil)

    private init(descriptor: Int32, path: String?) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Opens `path` for writing, truncated.
    ///
    /// - throws: ``ShellError`` naming the system's error.
    static func file(_ path: String) throws -> ShellOutput {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw ShellError("Cannot write \(path): \(String(cString: strerror(errno))).") }
        return ShellOutput(descriptor: descriptor, path: path)
    }

    /// Writes all of `bytes`.
    ///
    /// - throws: ``ShellError`` naming the system's error (a full disk, a closed pipe).
    func write(_ bytes: [UInt8]) throws {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(FileError) in try DurableWrite.writeAll(raw, to: descriptor, path: path ?? "standard output") }
        }
        if case .failure(let error) = result { throw ShellError("Cannot write to \(path ?? "standard output"): \(error.reason).") }
    }

    func write(_ text: String) throws {
        try write(Array(text.utf8))
    }

    /// Closes a file (standard output stays open).
    func close() {
        if path != nil { Foundation.close(descriptor) }
    }
}

/// A shell command that failed, in one sentence for the user.
public struct ShellError: Error, CustomStringConvertible {
    /// The sentence, saying what to do next where there is something to do.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
