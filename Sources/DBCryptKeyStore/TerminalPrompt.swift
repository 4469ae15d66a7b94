import DBCryptCore
import Foundation

/// A key typed on the process's terminal without echo (``KeyInput/terminal(prompt:confirm:)``).
enum TerminalPrompt {
    /// Asks for a key on `/dev/tty` without echo; with `confirm`, twice.
    /// The caller wipes what it returns.
    ///
    /// - throws: ``KeyInputError/noTerminal`` when standard input is not a
    ///   terminal or `/dev/tty` cannot be opened;
    ///   ``KeyInputError/keysDiffer`` when the two keys typed differ.
    static func ask(_ message: String, confirm: Bool) throws(KeyInputError) -> [UInt8] {
        guard isatty(STDIN_FILENO) == 1, let tty = fopen("/dev/tty", "r+") else { throw .noTerminal }
        defer { fclose(tty) }
        var first = readHidden(message, tty: tty)
        if confirm {
            var second = readHidden("Repeat the key: ", tty: tty)
            defer { SecretBytes.wipe(&second) }
            guard first == second else {
                SecretBytes.wipe(&first)
                throw .keysDiffer
            }
        }
        return first
    }

    /// Turns echo off (discarding what was typed ahead), then asks: what is
    /// typed once the prompt shows is read, and never shown; at most
    /// ``KeyInput/limit`` bytes.
    private static func readHidden(_ message: String, tty: UnsafeMutablePointer<FILE>) -> [UInt8] {
        let fd = fileno(tty)
        var saved = termios()
        tcgetattr(fd, &saved)
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(fd, TCSAFLUSH, &silent)
        fputs(message, tty)
        fflush(tty)
        defer {
            tcsetattr(fd, TCSAFLUSH, &saved)
            fputs("\n", tty)
        }
        // Room for any key up front: growing would leave unwiped copies behind.
        var line: [UInt8] = []
        line.reserveCapacity(KeyInput.limit)
        while line.count < KeyInput.limit {
            let c = fgetc(tty)
            if c == EOF || c == 10 { break }
            line.append(UInt8(truncatingIfNeeded: c))
        }
        return line
    }
}
