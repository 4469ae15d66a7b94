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

    /// Opens `path` for writing, truncated, unless it is the `database`
    /// the session has open or one of its journals, by any name: a mistyped
    /// `.once app.db` must not empty the database.
    ///
    /// - throws: ``ShellError`` naming the system's error, or refusing the database.
    static func file(_ path: String, notOverwriting database: String) throws -> ShellOutput {
        let refusal = ShellError("Cannot write \(path): it is \(database), which this shell has open, or its journal: name another file.")
        let existed = FileIdentity(path) != nil
        // By name first, so that a journal not made yet is not made here (a
        // symbolic link is refused by the open, as every link is).
        if CompanionFile.isNamedAsDatabaseOrCompanion(path, of: database) { throw refusal }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw ShellError("Cannot write \(path): \(String(cString: strerror(errno))).") }
        // By identity, on the file opened: another name of the database (a hard link) is refused too.
        var info = stat()
        if fstat(descriptor, &info) == 0, CompanionFile.isDatabaseOrCompanion(FileIdentity(info), of: database) {
            Foundation.close(descriptor)
            if !existed { unlink(path) }
            throw refusal
        }
        guard ftruncate(descriptor, 0) == 0 else {
            let reason = String(cString: strerror(errno))
            Foundation.close(descriptor)
            throw ShellError("Cannot write \(path): \(reason).")
        }
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
