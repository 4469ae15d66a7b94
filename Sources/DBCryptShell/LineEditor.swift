import CLibEdit
import Foundation
import Synchronization

/// The terminal's lines through libedit: editing, history navigation and
/// search over this session's lines (kept in memory only), and Tab
/// completion from ``candidates``.
enum LineEditor {
    /// What a prompt gave back.
    enum Input {
        /// A line, and the count of Ctrl-Cs when it was read.
        case line([UInt8], interrupts: Int)
        /// Ctrl-C at the prompt: the line typed so far (whether there was
        /// any) is dropped.
        case interrupted(hadText: Bool)
        /// Ctrl-D on an empty line, or the terminal went away.
        case end
    }

    /// The words Tab completes, set by the session before each prompt.
    static let candidates = Mutex<[String]>([])

    /// Sets libedit up, once: this program's name for `~/.editrc`, and completion.
    static func setUp() {
        dbcrypt_editline_setup { text, _, _ in
            rl_completion_matches(text) { prefix, state in LineEditor.match(prefix, state) }
        }
    }

    /// Shows `prompt` and reads one line.
    static func read(prompt: String) -> Input {
        let interruptsBefore = Interrupts.received
        dbcrypt_editline_reset_keys()
        guard let line = readline(prompt) else {
            guard Interrupts.received != interruptsBefore else { return .end }
            return .interrupted(hadText: dbcrypt_editline_keys_pressed() > 0)
        }
        defer { free(line) }
        if Interrupts.received != interruptsBefore { return .interrupted(hadText: strlen(line) > 0) }
        let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(line).assumingMemoryBound(to: UInt8.self), count: strlen(line)))
        return .line(bytes, interrupts: interruptsBefore)
    }

    /// Tells the read in progress, from the SIGINT handler, to give up its
    /// line. (Called here: each Swift file has its own copy of the shim's
    /// static functions and their static state, and the read's is this file's.)
    static func noteInterrupt() {
        dbcrypt_editline_note_interrupt()
    }

    /// Adds `line` to the lines the arrow keys and Ctrl-R recall.
    static func remember(_ line: String) {
        add_history(line)
    }

    /// The completion generator: the `state`-th candidate starting with
    /// `prefix` (ignoring case), copied for libedit to free; nil after the last.
    private static func match(_ prefix: UnsafePointer<CChar>?, _ state: Int32) -> UnsafeMutablePointer<CChar>? {
        guard let prefix else { return nil }
        let typed = String(cString: prefix).lowercased()
        let matches = candidates.withLock { words in words.filter { $0.lowercased().hasPrefix(typed) } }
        guard Int(state) < matches.count else { return nil }
        return strdup(matches[Int(state)])
    }
}
