// The one way the tests start a child process: a program we did not write,
// the built `dbcrypt`, or the test helper.
import Foundation

/// Where a child's standard output or error goes.
public enum ChildOutput: Sendable {
    /// Into a pipe that ``ChildProcess/finish()`` reads.
    case captured
    /// Nowhere (/dev/null).
    case discarded
    /// Into this file handle.
    case to(FileHandle)
}

/// A running child process, with what it prints captured as asked.
public final class ChildProcess: @unchecked Sendable {
    /// The process itself: running, or ended.
    public let process: Process
    private let output: Pipe?
    private let errors: Pipe?

    /// Starts `executable` with `arguments`, this process's environment with
    /// `environment` added and the variables in `removing` taken away, in
    /// `directory` (or this process's). Its standard input is `input`
    /// (written, then closed), or `standardInput`, or /dev/null.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], removing: [String] = [],
                directory: URL? = nil, input: Data? = nil, standardInput: FileHandle? = nil,
                standardOutput: ChildOutput = .captured, standardError: ChildOutput = .captured) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        for name in removing { env[name] = nil }
        process.environment = env
        func attach(_ choice: ChildOutput) -> (Any, Pipe?) {
            switch choice {
            case .captured: let pipe = Pipe(); return (pipe, pipe)
            case .discarded: return (FileHandle.nullDevice, nil)
            case .to(let handle): return (handle, nil)
            }
        }
        let (out, outPipe) = attach(standardOutput), (err, errPipe) = attach(standardError)
        output = outPipe
        errors = errPipe
        process.standardOutput = out
        process.standardError = err
        let stdin = Pipe()
        process.standardInput = standardInput ?? (input == nil ? FileHandle.nullDevice : stdin)
        try process.run()
        if let input {
            stdin.fileHandleForWriting.write(input)
            try stdin.fileHandleForWriting.close()
        }
    }

    /// The captured standard error, to read while the child runs.
    public var errorPipe: Pipe? { errors }
    /// The captured standard output, to read while the child runs.
    public var outputPipe: Pipe? { output }

    /// Whether the child ended by a signal (then ``finish()``'s status is
    /// the signal's number); false while it runs.
    public var endedBySignal: Bool { !process.isRunning && process.terminationReason == .uncaughtSignal }

    /// Reads what the child prints until it ends, then waits for it: its
    /// exit status (or the signal that ended it), standard output and error.
    public func finish() -> (status: Int32, stdout: String, stderr: String) {
        let out = output?.fileHandleForReading.readDataToEndOfFile() ?? Data()
        let err = errors?.fileHandleForReading.readDataToEndOfFile() ?? Data()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }
}

/// Runs a program to its end, with `input` on its standard input: exit
/// status, standard output, standard error.
public func runProgram(_ executable: String, _ arguments: [String], input: String? = nil,
                       environment: [String: String] = [:], removing: [String] = []) throws -> (Int32, String, String) {
    let child = try ChildProcess(executable, arguments, environment: environment, removing: removing, input: input.map { Data($0.utf8) })
    let result = child.finish()
    return (result.status, result.stdout, result.stderr)
}

/// The folder of the built products, where the test bundle is.
private let productsDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()

/// The built `dbcrypt`.
public let dbcryptPath = productsDirectory.appendingPathComponent("dbcrypt").path

/// The test helper executable (Tests/DBCryptTestHelper), built beside the test bundle.
public let testHelperPath = productsDirectory.appendingPathComponent("DBCryptTestHelper").path

/// Starts the test helper with `arguments` and `keys` added to its
/// environment; what it prints goes to `output` (or nowhere), its errors
/// are captured.
public func startTestHelper(_ arguments: [String], keys: [String: String], output: ChildOutput = .discarded) throws -> ChildProcess {
    try ChildProcess(testHelperPath, arguments, environment: keys, standardOutput: output)
}
