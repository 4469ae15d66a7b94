import CSQLCipher
import DBCrypt
import Foundation

/// An SQL session on one database, as the sqlite3 shell runs one: lines go
/// in, a statement runs once it is complete (ends with `;` outside a string
/// or a trigger's body), lines starting with `.` are dot-commands, rows
/// print in the chosen ``OutputMode``, and an error is one line on standard
/// error while the session goes on (unless `.bail on`).
public final class Shell {
    /// What the command-line tool does for the shell: the parts that need
    /// its key sources and reports.
    public struct Host {
        /// The file's cipher settings and format under a key, as `dbcrypt info` prints them.
        public var cipherReport: (DatabaseKey?) throws -> String
        /// Runs the body (second) with the new key of `.rekey` and `.backup
        /// --new-key`: from where the user said, or asked twice. A key made
        /// in a key store for it is removed again when the body throws,
        /// unless the first closure says the data is encrypted with it.
        public var newKey: (_ inUse: (DatabaseKey) -> Bool, _ body: (DatabaseKey) throws -> Void) throws -> Void
        /// Changes the key of the closed database from the first key, under
        /// the cipher settings it was open with, to the second, with the
        /// crash-safe routine.
        public var changeKey: (DatabaseKey, CipherSettings, DatabaseKey) throws -> Void
        /// Writes one line for the user to standard error.
        public var note: (String) -> Void
        /// The environment variables that hold keys, kept from the pager.
        public var secretVariables: Set<String>

        /// Makes a host from its parts.
        public init(cipherReport: @escaping (DatabaseKey?) throws -> String,
                    newKey: @escaping (_ inUse: (DatabaseKey) -> Bool, _ body: (DatabaseKey) throws -> Void) throws -> Void,
                    changeKey: @escaping (DatabaseKey, CipherSettings, DatabaseKey) throws -> Void, note: @escaping (String) -> Void,
                    secretVariables: Set<String>) {
            self.cipherReport = cipherReport
            self.newKey = newKey
            self.changeKey = changeKey
            self.note = note
            self.secretVariables = secretVariables
        }
    }

    /// Whether the session continues after a line.
    public enum Flow { case proceed, quit }

    var queue: DatabaseQueue
    let path: String
    var key: DatabaseKey?
    /// The options that opened the queue, to open it again after `.rekey`.
    let options: Database.Options
    let host: Host
    let interactive: Bool
    var mode: OutputMode
    var headers: Bool
    /// Whether `.headers` was given: then `.mode` leaves `headers` alone;
    /// until then each mode brings its own, as in sqlite3 3.53 (on for the
    /// column modes, off for the others).
    var headersGiven = false
    var nullValue: [UInt8] = []
    /// How control characters from the database are printed (`.mode ... --escape`).
    var escape = OutputEscape.ascii
    var bail = false
    var timer = false
    var showsChanges = false
    /// `.pager on`: long results go through `$PAGER` (on a terminal).
    var pager = false
    var output = ShellOutput.standardOutput
    /// Whether ``output`` goes back to standard output after one statement (`.once`).
    var outputIsOnce = false
    let realTextIsExact: Bool

    /// Whether a statement or command failed during the session: a script's exit status.
    public private(set) var hadError = false
    /// Whether an error ended the session (`.bail on`): its exit status, even on a terminal.
    public private(set) var stoppedByError = false
    /// The lines of a statement not complete yet.
    private var pending: [UInt8] = []
    /// The number of the line being read, in the current input.
    var lineNumber = 0
    /// Where `.read` is in its nesting, against a file that reads itself.
    var readDepth = 0
    /// The count of Ctrl-Cs when the line being run was read.
    var interruptsSeen = 0
    /// Where statements are remembered (an interactive session's).
    var history = ShellHistory.inMemory()

    /// A session on the database `queue` opened at `path` with `key` and `options`.
    /// Interactive, rows print as a box with headers; otherwise as the
    /// sqlite3 shell prints a script's: `list`, no headers.
    ///
    /// - throws: ``DatabaseError`` when the database cannot be read.
    public init(queue: DatabaseQueue, path: String, key: DatabaseKey?, options: Database.Options, interactive: Bool, host: Host) throws {
        self.queue = queue
        self.path = path
        self.key = key
        self.options = options
        self.interactive = interactive
        self.host = host
        mode = interactive ? .box : .list
        headers = interactive
        realTextIsExact = try queue.inDatabase(RowFormatter.realTextIsExact)
    }

    /// Whether a statement has begun and waits for more lines.
    public var isContinuing: Bool { !pending.isEmpty }

    /// Takes one line of input (without its newline).
    public func feed(_ line: [UInt8]) -> Flow {
        lineNumber += 1
        if pending.isEmpty {
            let trimmed = line.drop { $0 == 32 || $0 == 9 }
            if trimmed.first == UInt8(ascii: ".") { return dotCommand(String(decoding: trimmed, as: UTF8.self)) }
            if trimmed.first == UInt8(ascii: "#") { return .proceed }   // a comment line, as in sqlite3
            if trimmed.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 13 }) { return .proceed }
        }
        pending += line
        pending.append(10)
        // Only a line with a semicolon can complete a statement (a 10 MB
        // statement on many lines is checked once per semicolon, not per line).
        guard line.contains(UInt8(ascii: ";")), isComplete(pending) else { return .proceed }
        let sql = pending
        pending.removeAll(keepingCapacity: false)
        return run(sql)
    }

    /// Ends the input: a statement still open is an error, as in the sqlite3 shell.
    public func endOfInput() {
        guard !pending.isEmpty else { return }
        let blank = pending.allSatisfy { $0 == 32 || (9...13).contains($0) }
        pending.removeAll()
        if !blank { fail("Incomplete SQL at the end of the input: a statement ends with ';' outside any string.") }
    }

    /// Reports a failure in one line and notes it for the exit status.
    /// Returns whether the session goes on.
    @discardableResult
    func fail(_ message: String) -> Flow {
        hadError = true
        host.note(interactive ? "Error: \(message)" : "Error: near line \(lineNumber): \(message)")
        if bail { stoppedByError = true }
        return bail ? .quit : .proceed
    }

    /// Whether `sql` ends a statement (`sqlite3_complete`; a NUL byte read as a blank).
    private func isComplete(_ sql: [UInt8]) -> Bool {
        (sql.map { $0 == 0 ? 32 : $0 } + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { sqlite3_complete($0.baseAddress!) != 0 }
        }
    }

    /// Runs the statements of `sql` and prints their rows.
    func run(_ sql: [UInt8]) -> Flow {
        let text = String(decoding: sql, as: UTF8.self)
        // A typed PRAGMA rekey: the shell must know the key it goes on with.
        let changesKey = Self.changesKey(text)
        let newKey = changesKey ? Self.typedNewKey(in: text) : nil
        if changesKey {
            guard key != nil else { return fail("PRAGMA rekey does nothing to a plaintext database: to encrypt it, quit and run dbcrypt migrate.") }
            guard newKey != nil else { return fail("Write PRAGMA rekey = '...'; alone (or use .rekey), so that the shell goes on with the new key: not run.") }
        }
        let started = ShellClock.now()
        defer { finishOnce() }
        // With `.pager on`, a statement's rows are held, then shown through the pager if they fill the terminal.
        var held: [UInt8]? = pagesOutput ? [] : nil
        func emit(_ bytes: [UInt8]) throws {
            if held != nil { held! += bytes } else { try output.write(bytes) }
        }
        do {
            let printer = ResultPrinter(RowFormatter(mode: mode, headers: headers, nullValue: nullValue, escape: escape, realTextIsExact: realTextIsExact))
            let changes = try queue.inDatabase { db -> (Int, Int) in
                // Ctrl-C (in an interactive session) stops this statement.
                Interrupts.target(try db.interrupter, seen: interruptsSeen)
                defer { Interrupts.target(nil) }
                try db.executeScript(text) { cursor in try printer.print(cursor, emit) }
                return (db.changes, db.totalChanges)
            }
            if let held { try Pager.show(held, else: output, hiding: host.secretVariables) }
            if showsChanges { try output.write("changes: \(changes.0)   total_changes: \(changes.1)\n") }
            if let newKey {
                do {
                    try adopt(newKey)
                } catch {
                    return fail("PRAGMA rekey ran, but the database does not open with the key it gave: check it with .cipher before you quit.")
                }
            }
        } catch {
            return fail(Self.message(error))
        }
        if timer { try? output.write(ShellClock.report(since: started)) }
        return .proceed
    }

    /// An error in one line: SQLite's message for a statement, the
    /// library's sentence otherwise.
    static func message(_ error: Error) -> String {
        if case let DatabaseError.sqlite(code, message, _) = error {
            return code & 0xFF == SQLITE_INTERRUPT ? "interrupted" : message
        }
        return String(describing: error).split(separator: "\n").joined(separator: " ")
    }

    /// Whether rows go through the pager now: `.pager on`, an interactive
    /// session, rows going to standard output, and that a terminal.
    var pagesOutput: Bool {
        pager && interactive && output.path == nil && isatty(STDOUT_FILENO) == 1
    }

    /// Drops the lines of a statement not complete yet (Ctrl-C at the prompt).
    func discardPending() {
        pending.removeAll()
    }

    /// Sends output back to standard output after a `.once` statement.
    func finishOnce() {
        guard outputIsOnce else { return }
        output.close()
        output = .standardOutput
        outputIsOnce = false
    }

    /// Ends the session: closes a file that `.output` opened, and the database.
    ///
    /// - throws: what closing the database throws.
    public func close() throws {
        output.close()
        output = .standardOutput
        try queue.close()
    }
}

extension ShellValue {
    /// Column `index` of a cursor's current row, read once.
    init(_ row: Row, _ index: Int) {
        let column = row.sqliteColumn(at: index)
        let kind: Kind = switch column.type {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
        self.init(kind: kind, text: column.text, real: column.real)
    }
}

/// `.timer on`: wall clock and CPU time of each statement, as the sqlite3 shell prints them.
enum ShellClock {
    struct Instant { let wall: Double, user: Double, system: Double }

    static func now() -> Instant {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return Instant(wall: Double(DispatchTime.now().uptimeNanoseconds) / 1e9, user: seconds(usage.ru_utime), system: seconds(usage.ru_stime))
    }

    static func report(since start: Instant) -> String {
        let end = now()
        return String(format: "Run Time: real %.3f user %.6f sys %.6f\n", end.wall - start.wall, end.user - start.user, end.system - start.system)
    }
}
