// What the kill tests of both test targets share: where a child process is
// killed, and how many times.
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

    public var description: String {
        switch self {
        case .random: "at a random moment"
        case .fileAppears(_, let prefix): "when \(prefix)* appeared"
        case .fileAppearsAgain(_, let prefix, let times): "when \(prefix)* appeared for the \(times)th time"
        case .pathReplaced(let path): "right after \((path as NSString).lastPathComponent) was replaced"
        case .fileModified(let path): "when \((path as NSString).lastPathComponent) was first written"
        }
    }
}

/// `count` scaled by the environment variable DBCRYPT_KILL_SCALE (default 1):
/// `make test` runs a CI-sized number of kills, `make kill-tests` many more.
public func killCount(_ count: Int) -> Int {
    let scale = ProcessInfo.processInfo.environment["DBCRYPT_KILL_SCALE"].flatMap(Int.init) ?? 1
    return count * max(scale, 1)
}

/// Starts a child process with `start`, kills it with SIGKILL at `point` and
/// reaps it. Returns whether the kill landed: false when the process ended
/// by itself first (for `.random`, a moment past its end).
/// `typicalDuration` is how long an uninterrupted run takes.
public func runAndKill(at point: KillPoint, typicalDuration: TimeInterval, start: () throws -> Process) throws -> Bool {
    let baseline: FileIdentity? = switch point {
    case .pathReplaced(let path), .fileModified(let path): FileIdentity(path)
    default: nil
    }
    let leftovers: [String: FileIdentity] = switch point {
    case .fileAppears(let directory, let prefix), .fileAppearsAgain(let directory, let prefix, _): entries(of: directory, prefix: prefix)
    default: [:]
    }
    let process = try start()
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

/// Runs the process `start` makes once per point, in random order, killing it
/// there; asks `state` what the files hold after each kill (it checks that
/// they are whole), checks that against the point's expected outcome when the
/// kill landed, and calls `restore` after each replacement. Returns how many
/// kills left each outcome.
public func killAtEach(
    _ points: [(KillPoint, expected: KillOutcome?)], typicalDuration: TimeInterval,
    start: () throws -> Process, state: () throws -> KillOutcome, restore: () throws -> Void,
    file: StaticString = #filePath, line: UInt = #line
) throws -> [KillOutcome: Int] {
    var tally: [KillOutcome: Int] = [.original: 0, .replaced: 0]
    for (point, expected) in points.shuffled() {
        let landed = try runAndKill(at: point, typicalDuration: typicalDuration, start: start)
        let left = try state()
        tally[left, default: 0] += 1
        if landed, let expected { XCTAssertEqual(left, expected, "killed \(point)", file: file, line: line) }
        if left == .replaced { try restore() }
    }
    return tally
}
