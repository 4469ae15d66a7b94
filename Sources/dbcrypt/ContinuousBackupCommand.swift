import ArgumentParser
import DBCrypt
import Dispatch
import Foundation

/// `dbcrypt backup continuous`: every commit to a directory or S3, until stopped.
/// The first spelling, `dbcrypt backup DB --continuous`, still works.
struct ContinuousBackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "continuous",
        abstract: "Ship every commit of a database in WAL mode to a directory or S3, until stopped.",
        discussion: """
            --output is a directory, or s3://BUCKET/PREFIX in S3-compatible storage, that receives \
            every commit as it is made: the log's frames every --interval seconds and a full \
            snapshot every --snapshot-every seconds, encrypted and authenticated as the database \
            is, so the destination never holds a key or a plaintext byte. It runs until stopped (Ctrl-C or SIGTERM ship the last commits \
            first), or ships once with --once. While it runs, no checkpoint of any connection can \
            overwrite a commit it has not shipped. dbcrypt restore rebuilds the database as of \
            any commit shipped. (dbcrypt backup DB --continuous is the same command.)

            Example:
              dbcrypt backup continuous app.db -o /mnt/backup/app --key-env APP_KEY
              dbcrypt backup continuous app.db -o s3://backups/app --endpoint http://127.0.0.1:7480 --key-env APP_KEY
            """)

    @Argument(help: "The database to back up.")
    var database: String

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("The directory, or s3://BUCKET/PREFIX, that receives the backup.", valueName: "PATH|URL"))
    var output: String

    @Option(help: ArgumentHelp("Seconds between shipments (default 1).", valueName: "SECONDS"))
    var interval: Double?

    @Option(name: .customLong("snapshot-every"), help: ArgumentHelp("Seconds between full snapshots (default 3600).", valueName: "SECONDS"))
    var snapshotEvery: Double?

    @Option(help: ArgumentHelp("Seconds of history to keep (default 604800, 7 days).", valueName: "SECONDS"))
    var keep: Double?

    @Flag(help: "Ship what is committed now, then stop.")
    var once = false

    @Option(help: ArgumentHelp("After each commit shipped, write its receipt to this file (kept apart from the backup), for dbcrypt restore --expect-at-least.",
                               valueName: "FILE"))
    var receipt: String?

    @OptionGroup(title: "S3 storage") var storage: StorageOptions
    @OptionGroup var key: KeyOptions
    @OptionGroup(title: "Cipher settings of the database, if not a standard format") var cipher: CipherOptions

    func validate() throws {
        for (name, value) in [("--interval", interval), ("--snapshot-every", snapshotEvery), ("--keep", keep)] {
            if let value, !(value >= 0.001 && value < 1e9) {
                throw ValidationError("\(name) takes a number of seconds from 0.001 to 999999999.")
            }
        }
    }

    func run() throws {
        if CommandLine.arguments.prefix(while: { $0 != "--" }).contains("--continuous") {
            printError("note: dbcrypt backup DB --continuous is now spelled dbcrypt backup continuous DB; both work.")
        }
        let format = try requireDatabaseFile(database)
        if case .plaintext = format, key.isGiven { throw DatabaseError.notEncrypted(path: database) }
        guard case .notPlaintext = format else {
            throw CLIError("\(database) is not encrypted: a continuous backup ships encrypted pages. Encrypt it first with dbcrypt migrate.")
        }
        try ship(database, key: try key.key(prompt: "Key for \(database): "), cipher: cipher.settings, destination: output)
    }

    /// Runs the backup: prints a line for each commit shipped, stops at
    /// SIGINT or SIGTERM (shipping the last commits first), or after one
    /// round with --once.
    private func ship(_ database: String, key: DatabaseKey, cipher: CipherSettings, destination: String) throws {
        var options = ContinuousBackup.Options()
        if let interval { options.interval = .milliseconds(Int64(interval * 1000)) }
        if let snapshotEvery { options.snapshotInterval = .milliseconds(Int64(snapshotEvery * 1000)) }
        if let keep { options.retention = .milliseconds(Int64(keep * 1000)) }
        options.receiptPath = receipt
        options.shipped = { Self.report($0) }
        let stop = DispatchSemaphore(value: 0)
        options.failed = { error in
            // An error that ends the backup is what stop() throws: the status is not 0.
            if (error as? BackupError)?.endsContinuousBackup == true { stop.signal(); return }
            // A receipt not written is said; the backup goes on.
            if case BackupError.receiptNotWritten = error { return printError("\(error)") }
            printError("\(error) Trying again in \(interval ?? 1) s.")
        }
        let storage = try storage.storage(destination)
        let backup = try ContinuousBackup(path: database, key: key, cipher: cipher, storage: storage, options: options)
        guard !once else { return try backup.stop() }
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
