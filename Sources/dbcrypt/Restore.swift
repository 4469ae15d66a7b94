import ArgumentParser
import DBCrypt
import Foundation

/// `dbcrypt restore`: a database rebuilt from a continuous backup.
struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rebuild a database from a continuous backup, as of any commit it shipped.",
        discussion: """
            Every record used is authenticated with a key derived from the database's key, \
            every frame's checksum and every page's HMAC is checked, and SQLite checks the \
            result before it is renamed into place with mode 0600. A record missing or damaged \
            is named; --latest (the default) then restores the last commit before it, and says so.

            --at takes a time in ISO 8601 (2026-11-26T09:30:00Z) or seconds since 1970; the \
            commit restored is the last one shipped by then.

            Example:
              dbcrypt restore /mnt/backup/app -o app.db --key-env APP_KEY
              dbcrypt restore /mnt/backup/app -o app-yesterday.db --at 2026-11-25T18:00:00Z --key-env APP_KEY
              dbcrypt restore s3://backups/app -o app.db --endpoint http://127.0.0.1:7480 --key-env APP_KEY
            """)

    @Argument(help: ArgumentHelp("The directory, or s3://BUCKET/PREFIX, a continuous backup ships to.", valueName: "destination"))
    var destination: String

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("Where to write the database.", valueName: "PATH"))
    var output: String

    @Option(help: ArgumentHelp("Restore the last commit shipped by this time.", valueName: "TIME"))
    var at: String?

    @Option(help: ArgumentHelp("Restore this commit (as dbcrypt backup continuous printed it).", valueName: "N"))
    var commit: UInt64?

    @Flag(help: "Restore the last commit the backup holds (the default).")
    var latest = false

    @Flag(help: "Replace --output if it exists.")
    var force = false

    @Option(name: .customLong("expect-at-least"),
            help: ArgumentHelp("Refuse a backup rolled back to before this receipt's commit, or replaced (the file dbcrypt backup continuous --receipt wrote).",
                               valueName: "RECEIPT"))
    var expectAtLeast: String?

    @OptionGroup(title: "S3 storage") var storage: StorageOptions
    @OptionGroup var key: KeyOptions
    @OptionGroup(title: "Cipher settings of the database, if not a standard format") var cipher: CipherOptions

    func validate() throws {
        guard [at != nil, commit != nil, latest].filter({ $0 }).count <= 1 else {
            throw ValidationError("Give one of --at, --commit and --latest.")
        }
        if let at, Self.time(at) == nil {
            throw ValidationError("--at takes a time in ISO 8601 (2026-11-26T09:30:00Z) or seconds since 1970 (up to the year 9999), not \(at).")
        }
    }

    func run() throws {
        var isDirectory: ObjCBool = false
        guard destination.hasPrefix("s3://") || FileManager.default.fileExists(atPath: destination, isDirectory: &isDirectory) && isDirectory.boolValue else {
            throw CLIError("No backup directory at \(destination): give the directory dbcrypt backup continuous wrote.")
        }
        let target: ContinuousBackup.RestoreTarget = if let commit { .commit(commit) } else if let at { .time(Self.time(at)!) } else { .latest }
        let receipt = try expectAtLeast.map(BackupReceipt.init(contentsOf:))
        let databaseKey = try key.key(prompt: "Key for the database backed up in \(destination): ")
        var options = ExportOptions()
        options.replaceExisting = force
        let storage = try storage.storage(destination)
        let restored = try ContinuousBackup.restore(from: storage, key: databaseKey, cipher: cipher.settings, to: output, target: target,
                                                    expecting: receipt, options: options)
        if let problem = restored.problem {
            printError("note: \(problem); restored the last commit before it.")
        }
        if let skipped = restored.skipped { printError("note: \(skipped).") }
        try StandardStreams.say("Restored commit \(restored.commit), shipped at \(ISO8601DateFormatter().string(from: restored.time)), from \(destination) to \(output).")
    }

    /// `text` as ISO 8601 or seconds since 1970 (up to the year 9999).
    static func time(_ text: String) -> Date? {
        if let seconds = Double(text) {
            // Year 9999 at most: `inf` or 1e300 is no time, and no conversion of it may trap.
            return seconds >= 0 && seconds < 253_402_300_800 ? Date(timeIntervalSince1970: seconds) : nil
        }
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}
