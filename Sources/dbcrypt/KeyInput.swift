import DBCrypt
import Foundation

/// Reading a key from the environment, a file or the terminal, and telling
/// a passphrase from a raw key. Nothing here ever prints a key.
enum KeyInput {
    /// The bytes of a key or passphrase from the environment variable or
    /// file given, else asked on the terminal, and where they came from (for
    /// errors); not yet trimmed of a trailing newline. The caller wipes them.
    static func readText(environment: String?, file: String?, prompt: String, confirm: Bool,
                         options: (environment: String, file: String)) throws -> (bytes: [UInt8], source: String) {
        if let environment {
            guard let value = ProcessInfo.processInfo.environment[environment] else {
                throw CLIError("The environment variable \(environment) is not set: put the key in it, or use \(options.file).")
            }
            guard value.utf8.count <= StandardStreams.keyLimit else {
                throw CLIError("The environment variable \(environment) holds more than 64 KiB, far more than any key: check that it names the key.")
            }
            return (Array(value.utf8), "the environment variable \(environment)")
        }
        if let file {
            return (try StandardStreams.readKeyFile(file, naming: "the key file \(file)").withUnsafeBytes { Array($0) }, "the key file \(file)")
        }
        return (try self.prompt(prompt, confirm: confirm, hint: "\(options.environment) or \(options.file)"), "the terminal")
    }

    /// Removes one trailing newline (`\n` or `\r\n`) in place, so that no
    /// copy of a secret is left unwiped.
    static func trimNewline(_ bytes: inout [UInt8]) {
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
    }

    /// A passphrase, with one trailing newline (`\n` or `\r\n`) removed, or a
    /// raw key written `x'<hex>'`, as ``DatabaseKey/init(keyText:)`` reads it.
    /// The caller wipes `bytes`.
    static func parse(_ bytes: [UInt8], source: String) throws -> DatabaseKey {
        do {
            return try DatabaseKey(keyText: bytes)
        } catch {
            guard ![[], [10], [13], [13, 10]].contains(bytes) else { throw CLIError("The key in \(source) is empty.") }
            throw CLIError("The raw key in \(source) is malformed: write x' then 64 hex digits (or 96 with the salt) then '.")
        }
    }

    /// Asks for a key on the terminal without echo; with `confirm`, twice.
    static func prompt(_ message: String, confirm: Bool, hint: String) throws -> [UInt8] {
        guard isatty(STDIN_FILENO) == 1, let tty = fopen("/dev/tty", "r+") else {
            throw CLIError("No key given: use \(hint) (there is no terminal to ask on).")
        }
        defer { fclose(tty) }
        var first = try readHidden(message, tty: tty)
        if confirm {
            var second = try readHidden("Repeat the key: ", tty: tty)
            defer { SecretBytes.wipe(&second) }
            guard first == second else {
                SecretBytes.wipe(&first)
                throw CLIError("The two keys differ: nothing was changed.")
            }
        }
        return first
    }

    /// Turns echo off (discarding what was typed ahead), then asks: what is
    /// typed once the prompt shows is read, and never shown.
    private static func readHidden(_ message: String, tty: UnsafeMutablePointer<FILE>) throws -> [UInt8] {
        let fd = fileno(tty)
        var saved = termios()
        tcgetattr(fd, &saved)
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(fd, TCSAFLUSH, &silent)
        fputs(displayed(message), tty)
        fflush(tty)
        defer {
            tcsetattr(fd, TCSAFLUSH, &saved)
            fputs("\n", tty)
        }
        // Room for any key up front: growing would leave unwiped copies behind.
        var line: [UInt8] = []
        line.reserveCapacity(StandardStreams.keyLimit)
        while line.count < StandardStreams.keyLimit {
            let c = fgetc(tty)
            if c == EOF || c == 10 { break }
            line.append(UInt8(truncatingIfNeeded: c))
        }
        return line
    }
}

/// A failure the CLI reports in one sentence, with exit status 1 unless said otherwise.
struct CLIError: DBCryptError {
    let description: String
    let category: DBCryptErrorCategory

    /// One sentence for the user; its category sets the exit status (``ExitStatus/of(_:)``).
    init(_ description: String, category: DBCryptErrorCategory = .misuse) {
        self.description = description
        self.category = category
    }
}
