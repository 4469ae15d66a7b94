// A program in a real terminal: tmux, on a server of its own, for the tests
// of an interactive shell (keys typed, the screen read, the exit awaited).
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
private typealias SpawnActions = posix_spawn_file_actions_t
private typealias SpawnAttributes = posix_spawnattr_t
#else
import Darwin
private typealias SpawnActions = posix_spawn_file_actions_t?
private typealias SpawnAttributes = posix_spawnattr_t?
#endif

/// Why a ``TmuxTerminal`` failed: a tmux command that failed, or a wait
/// that ran out (with the screen at its deadline).
public struct TmuxTerminalError: Error, CustomStringConvertible {
    /// What failed, and the screen or tmux's complaint.
    public let description: String

    /// An error that says `description`.
    public init(_ description: String) { self.description = description }
}

/// A program running in a terminal of ``columns`` × ``rows`` cells that
/// tmux keeps: a session on a private server (its own socket in a fresh
/// temporary directory, no configuration file), ended by ``close()`` or
/// when the terminal is freed.
///
/// Wait for the program's prompt before typing: what is typed before it
/// sets up its terminal may be echoed by the terminal, or thrown away.
public final class TmuxTerminal: Sendable {
    /// The tmux the terminals run.
    public static let tmuxPath = "/usr/bin/tmux"
    /// The terminal's width, in cells.
    public static let columns = 120
    /// The terminal's height, in cells.
    public static let rows = 40
    /// The lines kept above the screen (tmux's own default is 2,000).
    public static let scrollback = 100_000

    /// The directory of the server's socket, removed by ``close()``.
    public let socketDirectory: URL
    private let socket: String
    /// The program's pane (`%0`): the target of every command.
    private let pane: String
    /// The server's process.
    private let server: pid_t
    private let closed = Mutex(false)

    /// Starts `executable` with `arguments` (each passed as it is: no shell
    /// reads them) in a new tmux session on a private server, in `directory`
    /// (or this process's). The program's environment is this process's with
    /// `environment` added (and tmux's own TERM, TMUX and TMUX_PANE): it is
    /// the environment of the tmux client that starts the server, which the
    /// server and its session inherit, so a secret passed here reaches no
    /// command line. The pane remains when the program ends, for
    /// ``waitForExit(timeout:)`` to read its status.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                directory: URL? = nil) throws {
        // A socket's path has at most 107 bytes: a long TMPDIR gives way to /tmp.
        var parent = FileManager.default.temporaryDirectory.path
        if parent.utf8.count > 60 { parent = "/tmp" }
        var template = Array((parent + "/dbcrypt-tmux-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw TmuxTerminalError("cannot make a directory for tmux's socket in \(parent): errno \(errno)")
        }
        socketDirectory = URL(fileURLWithPath: String(cString: made), isDirectory: true)
        socket = socketDirectory.appendingPathComponent("socket").path
        do {
            var session = ["new-session", "-d", "-x", "\(Self.columns)", "-y", "\(Self.rows)", "-P", "-F", "#{pane_id} #{pid}"]
            if let directory { session += ["-c", directory.path] }
            // With one word after the options tmux would hand it to a shell
            // to read: /bin/sh execs the program with its arguments as they are.
            session += ["--", "/bin/sh", "-c", "exec \"$0\" \"$@\"", executable] + arguments
            // Three commands, the `;` between them the ones tmux reads as such.
            let command = ["-f", "/dev/null", "set-option", "-g", "remain-on-exit", "on", ";",
                           "set-option", "-g", "history-limit", "\(Self.scrollback)", ";"] + session.map(Self.escaped)
            (pane, server) = try Self.start(socket: socket, command, in: socketDirectory, environment: environment)
        } catch {
            try? FileManager.default.removeItem(at: socketDirectory)
            throw error
        }
    }

    deinit { close() }

    /// Runs the client that starts the server, and waits for its end. Not
    /// with Foundation's Process: its child keeps a socket that tells
    /// Process of the child's end by closing, and the server (a daemon the
    /// client forks) would keep it open, so that the client seemed to run
    /// until the server ended. This client gets no descriptor but its
    /// standard input (/dev/null), output and error (files, read once it ended).
    private static func start(socket: String, _ command: [String], in directory: URL,
                              environment: [String: String]) throws -> (pane: String, server: pid_t) {
        let outputFile = directory.appendingPathComponent("started").path
        let errorFile = directory.appendingPathComponent("complaint").path
        let output = open(outputFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let errors = open(errorFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer {
            if output >= 0 { closeDescriptor(output) }
            if errors >= 0 { closeDescriptor(errors) }
            unlink(outputFile)
            unlink(errorFile)
        }
        guard output >= 0, errors >= 0 else {
            throw TmuxTerminalError("cannot make the files for tmux's output in \(directory.path): errno \(errno)")
        }
        var actions = SpawnActions(), attributes = SpawnAttributes()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, errors, 2)
        #if canImport(Glibc)
        closeDescriptors(from: 3, in: &actions)
        #else
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_CLOEXEC_DEFAULT))
        #endif
        var variables = ProcessInfo.processInfo.environment
        variables.merge(environment) { $1 }
        for name in ["TMUX", "TMUX_PANE", "COLUMNS", "LINES"] { variables[name] = nil }
        let argv = ([tmuxPath, "-S", socket] + command).map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0)=\($1)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, tmuxPath, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw TmuxTerminalError("cannot start \(tmuxPath): errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw TmuxTerminalError("cannot wait for tmux new-session: errno \(errno)") }
        }
        let exited = status & 0x7f == 0, code = (status >> 8) & 0xff
        let printed = ((try? String(contentsOfFile: outputFile, encoding: .utf8)) ?? "").split(whereSeparator: \.isWhitespace)
        let complaint = (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? ""
        guard exited, code == 0, printed.count == 2, printed[0].hasPrefix("%"), let server = pid_t(printed[1]) else {
            throw TmuxTerminalError("tmux new-session failed (\(exited ? "status \(code)" : "signal \(status & 0x7f)")): \(complaint)")
        }
        return (String(printed[0]), server)
    }

    #if canImport(Glibc)
    /// Adds to `actions` the closing of every descriptor from `first` on:
    /// glibc's posix_spawn_file_actions_addclosefrom_np (2.34 on, looked up:
    /// Swift's Glibc module leaves it out), else a close of each descriptor
    /// open now.
    private static func closeDescriptors(from first: Int32, in actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np"),
           unsafeBitCast(symbol, to: CloseFrom.self)(&actions, first) == 0 {
            return
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in open.compactMap({ Int32($0) }) where descriptor >= first {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
    }
    #endif

    /// `argument` as tmux passes it on: tmux reads an argument that ends in
    /// `;` as the end of a command (and drops the `;`, "SELECT 1;" would be
    /// "SELECT 1") unless a backslash comes before that `;`.
    private static func escaped(_ argument: String) -> String {
        argument.hasSuffix(";") ? String(argument.dropLast()) + "\\;" : argument
    }

    /// Runs a tmux command (one that starts no server) on this terminal's
    /// server: what it prints, or an error with its complaint.
    private func tmux(_ command: [String]) throws -> String {
        let (status, output, complaint) = try runProgram(Self.tmuxPath, ["-S", socket] + command.map(Self.escaped))
        guard status == 0 else {
            throw TmuxTerminalError("tmux \(command.first ?? "") failed (status \(status)): \(complaint)")
        }
        return output
    }

    /// Types `text` as it is, character by character (`send-keys -l`): a
    /// newline in it is a line feed, not Enter (see ``press(_:)``).
    public func type(_ text: String) throws {
        guard !text.isEmpty else { return }
        _ = try tmux(["send-keys", "-t", pane, "-l", "--", text])
    }

    /// Presses keys by tmux's names, in order: `"Enter"`, `"Up"`, `"Tab"`,
    /// `"BSpace"`, `"Escape"`, `"C-c"`, `"C-d"`, `"M-b"`…
    public func press(_ keys: String...) throws {
        guard !keys.isEmpty else { return }
        _ = try tmux(["send-keys", "-t", pane, "--"] + keys)
    }

    /// Resizes the terminal (the program gets SIGWINCH).
    public func resize(columns: Int, rows: Int) throws {
        _ = try tmux(["resize-window", "-t", pane, "-x", String(columns), "-y", String(rows)])
    }

    /// The scrollback (its last ``scrollback`` lines) and the screen as text now, wrapped lines joined
    /// (`capture-pane -p -J -S -`), without the empty rows below the last
    /// line written. Spaces a program wrote at a line's end stay (a prompt's).
    public func screen() throws -> String {
        var lines = try tmux(["capture-pane", "-p", "-J", "-S", "-", "-t", pane])
            .split(separator: "\n", omittingEmptySubsequences: false)
        while let last = lines.last, last.allSatisfy({ $0 == " " }) { lines.removeLast() }
        return lines.joined(separator: "\n")
    }

    /// Waits until `condition` holds of the screen (``screen()``), polled
    /// until `timeout` seconds have passed, and returns that screen; or
    /// throws an error that names `what` was awaited, with the last screen.
    @discardableResult
    public func waitFor(_ what: String, timeout: TimeInterval = 10, _ condition: (String) -> Bool) throws -> String {
        var shown = ""
        let held = try waitUntil(timeout: timeout, every: 0.02) {
            shown = try screen()
            return condition(shown)
        }
        guard held else {
            throw TmuxTerminalError("not within \(timeout) s: \(what); the screen:\n\(shown)")
        }
        return shown
    }

    /// Waits until the screen shows `text`, and returns the screen
    /// (``waitFor(_:timeout:_:)``).
    @discardableResult
    public func waitFor(text: String, timeout: TimeInterval = 10) throws -> String {
        try waitFor("the screen shows \"\(text)\"", timeout: timeout) { $0.contains(text) }
    }

    /// Waits until the program has ended, and returns its exit status; or,
    /// when a signal ended it, 128 plus the signal's number (as a shell
    /// does). tmux then writes "Pane is dead (status N, time)" on the screen.
    @discardableResult
    public func waitForExit(timeout: TimeInterval = 10) throws -> Int32 {
        var state: [Substring] = []
        let ended = try waitUntil(timeout: timeout, every: 0.02) {
            state = try tmux(["display-message", "-p", "-t", pane, "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}"])
                .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ":", omittingEmptySubsequences: false)
            guard state.count == 3, state[0] == "1" else { return false }
            if !state[1].isEmpty || !state[2].isEmpty { return true }
            // The pane is dead (its terminal closed) but the program not
            // reaped: tmux learns its status from SIGCHLD, and Debian's tmux
            // loses a SIGCHLD that comes while libutempter's handler stands
            // in for its own (tmux/tmux#311), leaving the program a zombie.
            // Another SIGCHLD makes the server reap it.
            kill(server, SIGCHLD)
            return false
        }
        guard ended else {
            let shown = (try? screen()) ?? "(not readable)"
            throw TmuxTerminalError("not within \(timeout) s: the program's end; the screen:\n\(shown)")
        }
        if let status = Int32(state[1]) { return status }
        if let signal = Int32(state[2]) { return 128 + signal }
        throw TmuxTerminalError("tmux told an exit status that is no number: \(state.joined(separator: ":"))")
    }

    /// Ends the server (a program still running gets SIGHUP, as when a
    /// terminal closes) and removes the socket's directory. Once; later
    /// calls do nothing.
    public func close() {
        let first = closed.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        _ = try? runProgram(Self.tmuxPath, ["-S", socket, "kill-server"])
        try? FileManager.default.removeItem(at: socketDirectory)
    }
}

/// Closes a descriptor (`close` inside ``TmuxTerminal`` is its own).
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }
