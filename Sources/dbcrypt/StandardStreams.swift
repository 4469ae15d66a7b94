import Foundation
import DBCryptCore

/// Standard input and output with every read and write checked: a
/// directory given as input, a full disk or a closed pipe as output is one
/// sentence and exit status 1, never a crash, and lost output never exits 0.
enum StandardStreams {
    /// The most standard input may hold for one sealed value or envelope.
    static let inputLimit = 64 * 1024 * 1024

    /// All of standard input, at most ``inputLimit`` bytes.
    ///
    /// - throws: ``CLIError`` naming the system's error, or saying that the
    ///   input is longer than the limit.
    static func readInput() throws -> Data {
        do throws(FileError) {
            return try WholeFile.read(STDIN_FILENO, naming: "standard input", limit: inputLimit).withUnsafeBytes { Data($0) }
        } catch .tooLarge {
            throw CLIError("Standard input holds more than 64 MiB, more than one value to seal: give less.")
        } catch {
            throw CLIError("Cannot read standard input: \(error.reason).")
        }
    }

    /// Writes all of `data` to standard output.
    ///
    /// - throws: ``CLIError`` naming the system's error (SIGPIPE is ignored,
    ///   so a closed pipe is EPIPE here).
    static func write(_ data: Data) throws {
        let written = data.withUnsafeBytes { bytes in
            Result { () throws(FileError) in try DurableWrite.writeAll(bytes, to: STDOUT_FILENO, path: "standard output") }
        }
        guard case .failure(let error) = written else { return }
        throw CLIError("Cannot write to standard output: \(error.reason).")
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
