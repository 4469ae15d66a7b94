// The kill-campaign driver every kill test shares: what a child process
// is, where it is killed, how many times, and what each kill left.
import Foundation
import XCTest

/// The moment a kill test sends SIGKILL to a routine running in a child process.
public enum KillPoint: Sendable, CustomStringConvertible {
    /// A random instant between the start and 1.1 times an uninterrupted run.
    case random
    /// The instant a file whose name starts with `prefix` appears in
    /// `directory`, or one already there is written (a routine's temporary
    /// file, a transaction's journal). Files a killed run left behind do not
    /// count until they are written again.
    case fileAppears(directory: String, prefix: String)
    /// The instant a file whose name starts with `prefix` appears in
    /// `directory` for the `times`-th time since the start: a rollback
    /// journal appears once per transaction, so this is the `times`-th
    /// transaction under way, the ones before it committed.
    case fileAppearsAgain(directory: String, prefix: String, times: Int)
    /// The instant `path` names another file than it did at the start: right
    /// after a rename over it, or after it first appears.
    case pathReplaced(String)
    /// The instant the file at `path` is first written (its size or
    /// modification time changes): a commit under way.
    case fileModified(String)
    /// At the `occurrence`-th call of the system call `name` (1 is the
    /// first; strace's syscall expression, so `a,b` names either), before it runs: the child runs under strace, which sends the
    /// SIGKILL itself. `rename` 1 is the instant a routine's new file is
    /// written and synced, just before it replaces the old one; see
    /// ``KillTarget/fsyncsBeforeFirstRename()`` for the directory sync right
    /// after the rename. Exact, where a watcher is only as quick as its polls.
    case beforeSyscall(String, occurrence: Int)

    /// Just before the rename that puts a routine's new file in place (a libc
    /// may call any of the three).
    public static let beforeRename = KillPoint.beforeSyscall(renameCalls, occurrence: 1)

    public var description: String {
        switch self {
        case .random: "at a random moment"
        case .fileAppears(_, let prefix): "when \(prefix)* appeared"
        case .fileAppearsAgain(_, let prefix, let times): "when \(prefix)* appeared for the \(times)th time"
        case .pathReplaced(let path): "right after \((path as NSString).lastPathComponent) was replaced"
        case .fileModified(let path): "when \((path as NSString).lastPathComponent) was first written"
        case .beforeSyscall(let name, let occurrence): "before \(name) call \(occurrence)"
        }
    }
}

/// Which campaign a kill test runs. `make test` runs the quick one: each
/// point where a kill matters, once or twice, and a few random moments, on
/// small fixtures. `make kill-tests` sets DBCRYPT_KILL_SCALE (default 10)
/// and runs the full one: the counts and fixtures each test was written
/// with, times the scale.
public enum KillCampaign {
    /// DBCRYPT_KILL_SCALE, or nil in `make test`.
    public static let scale: Int? = ProcessInfo.processInfo.environment["DBCRYPT_KILL_SCALE"]
        .flatMap { Int($0) }.map { max($0, 1) }

    /// Whether this is `make kill-tests`' full campaign.
    public static var isFull: Bool { scale != nil }

    /// How many kills of one kind: `quick` in `make test`, `full` times the scale in `make kill-tests`.
    public static func kills(quick: Int, full: Int) -> Int { scale.map { full * $0 } ?? quick }

    /// A fixture's size (rows, say): `quick` in `make test`, `full` in `make kill-tests`.
    public static func size(quick: Int, full: Int) -> Int { isFull ? full : quick }
}

/// What a kill test starts, again and again: a program with its arguments
/// and environment additions. Its standard error is discarded; its standard
/// output goes to `output`.
public struct KillTarget: Sendable {
    public let executable: String
    public let arguments: [String]
    public let environment: [String: String]
    public let output: ChildOutput

    public init(_ executable: String, _ arguments: [String], environment: [String: String], output: ChildOutput = .discarded) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.output = output
    }

    /// The test helper (Tests/DBCryptTestHelper) with `arguments` and `keys` in its environment.
    public static func testHelper(_ arguments: [String], keys: [String: String], output: ChildOutput = .discarded) -> KillTarget {
        KillTarget(testHelperPath, arguments, environment: keys, output: output)
    }

    /// Starts it, under strace with `straceOptions` when given.
    public func start(straceOptions: [String] = []) throws -> Process {
        let (program, commandLine) = straceOptions.isEmpty ? (executable, arguments)
            : (strace, ["-f", "-qq"] + straceOptions + ["--", executable] + arguments)
        return try ChildProcess(program, commandLine, environment: environment, standardOutput: output, standardError: .discarded).process
    }

    /// Runs it to its end under strace and counts its `fsync` calls before
    /// its first rename: the next one is the directory's, which makes the
    /// rename durable (``KillPoint/beforeSyscall(_:occurrence:)`` with this
    /// count plus one). The run completes: restore the files after it.
    public func fsyncsBeforeFirstRename() throws -> Int {
        let trace = FileManager.default.temporaryDirectory.appendingPathComponent("dbcrypt-kill-trace-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: trace) }
        let process = try start(straceOptions: ["-o", trace, "-e", "trace=fsync,\(renameCalls)"])
        process.waitUntilExit()
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        guard let rename = lines.firstIndex(where: { $0.contains(" rename") }) else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "\(executable) renamed nothing"])
        }
        return lines[..<rename].filter { $0.contains(" fsync(") }.count
    }
}

/// strace, which kills a child at an exact system call (`make test`'s bootstrap installs it).
private let strace = "/usr/bin/strace"

/// The system calls that rename a file.
private let renameCalls = "rename,renameat,renameat2"

/// Starts `target`, kills it with SIGKILL at `point` and reaps it. Returns
/// whether the kill landed: false when the process ended by itself first
/// (for `.random`, a moment past its end).
/// `typicalDuration` is how long an uninterrupted run takes.
public func runAndKill(at point: KillPoint, typicalDuration: TimeInterval, target: KillTarget) throws -> Bool {
    if case .beforeSyscall(let name, let occurrence) = point {
        let process = try target.start(straceOptions: ["-o", "/dev/null", "-e", "inject=\(name):signal=KILL:when=\(occurrence)"])
        process.waitUntilExit()
        // strace ends itself with the signal that ended its child.
        return process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
    }
    let baseline: FileIdentity? = switch point {
    case .pathReplaced(let path), .fileModified(let path): FileIdentity(path)
    default: nil
    }
    let leftovers: [String: FileIdentity] = switch point {
    case .fileAppears(let directory, let prefix), .fileAppearsAgain(let directory, let prefix, _): entries(of: directory, prefix: prefix)
    default: [:]
    }
    let process = try target.start()
    defer { process.waitUntilExit() }
    // The point is watched every 50 µs; a process that ends first was not killed.
    let watch = { (reached: () -> Bool) in waitUntil(timeout: 600, every: 0.000_05) { reached() || !process.isRunning } }
    switch point {
    case .random:
        pause(Double.random(in: 0...(typicalDuration * 1.1)))
    case .fileAppears(let directory, let prefix):
        watch { !entries(of: directory, prefix: prefix).allSatisfy { name, now in now.sameContentStamp(as: leftovers[name]) } }
    case .fileAppearsAgain(let directory, let prefix, let times):
        var present = Set(leftovers.keys)
        var appearances = 0
        watch {
            let now = Set(entries(of: directory, prefix: prefix).keys)
            appearances += now.subtracting(present).count
            present = now
            return appearances >= times
        }
    case .pathReplaced(let path):
        watch { FileIdentity(path) != baseline }
    case .fileModified(let path):
        watch { FileIdentity(path).map { !$0.sameContentStamp(as: baseline) } ?? true }
    case .beforeSyscall:
        preconditionFailure("strace kills at a system call: see the start of this function")
    }
    guard process.isRunning else { return false }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    return process.terminationReason == .uncaughtSignal
}

/// A file's device and inode, or nil when nothing is at the path; with its
/// size and modification time, which tell a write.
private struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modified: timespec

    init?(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        #if canImport(Glibc)
        modified = info.st_mtim
        #else
        modified = info.st_mtimespec
        #endif
    }

    /// The same file: size and modification time do not count.
    static func == (a: FileIdentity, b: FileIdentity) -> Bool { a.device == b.device && a.inode == b.inode }

    /// The same file, neither resized nor written since `other`.
    func sameContentStamp(as other: FileIdentity?) -> Bool {
        guard let other else { return false }
        return self == other && size == other.size
            && modified.tv_sec == other.modified.tv_sec && modified.tv_nsec == other.modified.tv_nsec
    }
}

/// The files in `directory` whose names start with `prefix`.
private func entries(of directory: String, prefix: String) -> [String: FileIdentity] {
    guard let dir = opendir(directory) else { return [:] }
    defer { closedir(dir) }
    var found: [String: FileIdentity] = [:]
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name.hasPrefix(prefix), let identity = FileIdentity((directory as NSString).appendingPathComponent(name)) {
            found[name] = identity
        }
    }
    return found
}

/// What a path holds after a routine that replaces it was killed.
public enum KillOutcome: Sendable {
    case original, replaced
}

/// Runs `target` once per point, in random order, killing it there; asks
/// `state` what the files hold after each kill (it checks that they are
/// whole), checks that against the point's expected outcome when the kill
/// landed, and calls `restore` after each replacement. A kill at a system
/// call must land. Returns how many kills left each outcome.
public func killAtEach(
    _ points: [(KillPoint, expected: KillOutcome?)], typicalDuration: TimeInterval,
    target: KillTarget, state: () throws -> KillOutcome, restore: () throws -> Void,
    file: StaticString = #filePath, line: UInt = #line
) throws -> [KillOutcome: Int] {
    var tally: [KillOutcome: Int] = [.original: 0, .replaced: 0]
    for (point, expected) in points.shuffled() {
        let landed = try runAndKill(at: point, typicalDuration: typicalDuration, target: target)
        if case .beforeSyscall = point { XCTAssertTrue(landed, "no kill \(point): the run never got there", file: file, line: line) }
        let left = try state()
        tally[left, default: 0] += 1
        if landed, let expected { XCTAssertEqual(left, expected, "killed \(point)", file: file, line: line) }
        if left == .replaced { try restore() }
    }
    return tally
}
