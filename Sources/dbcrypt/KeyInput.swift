import DBCrypt
import Foundation

/// Reading a key from the environment, a file or the terminal, and telling
/// a passphrase from a raw key. Nothing here ever prints a key.
enum KeyInput {
    /// The key from the environment variable or file given, else asked on the
    /// terminal (twice when `confirm`). `options` names the two options
    /// (`--key-env`, `--key-file`, or the new key's) in errors.
    static func read(environment: String?, file: String?, prompt: String, confirm: Bool,
                     options: (environment: String, file: String)) throws -> DatabaseKey {
        if let environment { return try fromEnvironment(environment, otherwise: options.file) }
        if let file { return try fromFile(file) }
        return try self.prompt(prompt, confirm: confirm, hint: "\(options.environment) or \(options.file)")
    }

    /// The key in the environment variable `name`; `fileOption` is the option
    /// to suggest instead when it is not set.
    static func fromEnvironment(_ name: String, otherwise fileOption: String) throws -> DatabaseKey {
        guard let value = ProcessInfo.processInfo.environment[name] else {
            throw CLIError("The environment variable \(name) is not set: put the key in it, or use \(fileOption).")
        }
        return try parse(Array(value.utf8), source: "the environment variable \(name)")
    }

    /// The key in the file at `path`.
    static func fromFile(_ path: String) throws -> DatabaseKey {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError("Cannot read the key file \(path): check that it exists and is readable.")
        }
        return try parse(Array(data), source: "the key file \(path)")
    }

    /// A passphrase, with one trailing newline (`\n` or `\r\n`) removed, or a
    /// raw key written `x'<hex>'`.
    static func parse(_ bytes: [UInt8], source: String) throws -> DatabaseKey {
        var bytes = bytes
        defer { bytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard !bytes.isEmpty else { throw CLIError("The key in \(source) is empty.") }
        if bytes.count >= 2, bytes[0] == UInt8(ascii: "x") || bytes[0] == UInt8(ascii: "X"), bytes[1] == UInt8(ascii: "'") {
            do {
                return try DatabaseKey(sqlcipherRawKey: String(decoding: bytes, as: UTF8.self))
            } catch {
                throw CLIError("The raw key in \(source) is malformed: write x' then 64 hex digits (or 96 with the salt) then '.")
            }
        }
        return .passphrase(bytes: bytes)
    }

    /// Asks for a key on the terminal without echo; with `confirm`, twice.
    static func prompt(_ message: String, confirm: Bool, hint: String) throws -> DatabaseKey {
        guard isatty(STDIN_FILENO) == 1, let tty = fopen("/dev/tty", "r+") else {
            throw CLIError("No key given: use \(hint) (there is no terminal to ask on).")
        }
        defer { fclose(tty) }
        let first = try readHidden(message, tty: tty)
        if confirm {
            let second = try readHidden("Repeat the key: ", tty: tty)
            guard first == second else { throw CLIError("The two keys differ: nothing was changed.") }
        }
        return try parse(first, source: "the terminal")
    }

    private static func readHidden(_ message: String, tty: UnsafeMutablePointer<FILE>) throws -> [UInt8] {
        fputs(message, tty)
        fflush(tty)
        let fd = fileno(tty)
        var saved = termios()
        tcgetattr(fd, &saved)
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(fd, TCSAFLUSH, &silent)
        defer {
            tcsetattr(fd, TCSAFLUSH, &saved)
            fputs("\n", tty)
        }
        var line: [UInt8] = []
        while true {
            let c = fgetc(tty)
            if c == EOF || c == 10 { break }
            line.append(UInt8(truncatingIfNeeded: c))
        }
        return line
    }
}

/// A failure the CLI reports in one sentence, with exit status 1 unless said otherwise.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    let status: Int32

    init(_ description: String, status: Int32 = 1) {
        self.description = description
        self.status = status
    }
}
