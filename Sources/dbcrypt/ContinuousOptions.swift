import ArgumentParser
import DBCrypt
import Dispatch
import Foundation

/// `dbcrypt backup --continuous`: every commit to a directory, until stopped.
struct ContinuousOptions: ParsableArguments {
    @Flag(help: "Ship every commit to the --output directory until stopped.")
    var continuous = false

    @Option(help: ArgumentHelp("Seconds between shipments (default 1).", valueName: "SECONDS"))
    var interval: Double?

    @Option(name: .customLong("snapshot-every"), help: ArgumentHelp("Seconds between full snapshots (default 3600).", valueName: "SECONDS"))
    var snapshotEvery: Double?

    @Option(help: ArgumentHelp("Seconds of history to keep (default 604800, 7 days).", valueName: "SECONDS"))
    var keep: Double?

    @Flag(help: "Ship what is committed now, then stop.")
    var once = false

    /// Whether an option of a continuous backup was given.
    var isGiven: Bool { interval != nil || snapshotEvery != nil || keep != nil || once }

    func validate() throws {
        for (name, value) in [("--interval", interval), ("--snapshot-every", snapshotEvery), ("--keep", keep)] {
            if let value, !(value >= 0.001 && value < 1e9) {
                throw ValidationError("\(name) takes a number of seconds from 0.001 to 999999999.")
            }
        }
    }

    /// Runs the backup: prints a line for each commit shipped, stops at
    /// SIGINT or SIGTERM (shipping the last commits first), or after one
    /// round with --once.
    func run(_ database: String, key: DatabaseKey, cipher: CipherSettings, destination: String) throws {
        var options = ContinuousBackup.Options()
        if let interval { options.interval = .milliseconds(Int64(interval * 1000)) }
        if let snapshotEvery { options.snapshotInterval = .milliseconds(Int64(snapshotEvery * 1000)) }
        if let keep { options.retention = .milliseconds(Int64(keep * 1000)) }
        options.shipped = { Self.report($0) }
        options.failed = { error in printError("\(error) Trying again in \(interval ?? 1) s.") }
        let storage = try DirectoryBackupStorage(path: destination)
        let backup = try ContinuousBackup(path: database, key: key, cipher: cipher, storage: storage, options: options)
        guard !once else { return try backup.stop() }
        let stop = DispatchSemaphore(value: 0)
        var sources: [DispatchSourceSignal] = []
        for signal in [SIGINT, SIGTERM] {
            Foundation.signal(signal, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signal, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            sources.append(source)
        }
        stop.wait()
        try backup.stop()
    }

    private static func report(_ commit: ContinuousBackup.ShippedCommit) {
        let line = "shipped commit \(commit.commit) at \(ISO8601DateFormatter().string(from: commit.time))\n"
        FileHandle.standardOutput.write(Data(line.utf8))
    }
}
