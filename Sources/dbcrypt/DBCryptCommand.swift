import ArgumentParser
import Foundation

/// `dbcrypt`: encrypt, decrypt, re-key, check and query SQLCipher databases.
@main
struct DBCryptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dbcrypt",
        abstract: "Encrypt, decrypt, re-key, check and query SQLCipher databases; seal values.",
        discussion: """
            Keys never go on the command line: give --key-env NAME (the key is in that \
            environment variable), --key-file PATH, or a key kept in the system's key store: \
            --key-keyring SERVICE/ACCOUNT (the Secret Service), --key-kernel-keyring NAME, \
            --key-credential NAME (systemd's LoadCredential=); with none, dbcrypt asks on the \
            terminal without echo. A key file or variable holds a passphrase (one trailing \
            newline is ignored) or a raw key written x'<64 hex digits>' (or x'<96 hex \
            digits>' with its salt).

            Exit status: 0 success; 1 failure; 3 wrong key (or store passphrase), or not a \
            database; 4 the database is damaged; 5 the key store is locked or cannot be \
            reached; 6 the key store holds no such key; 7 what the key store holds there is \
            not a key, or a credential others may read; 64 usage error.

            Example:
              export APP_KEY='correct horse battery staple'
              dbcrypt migrate app.db --key-env APP_KEY
              dbcrypt sql app.db --key-env APP_KEY "SELECT count(*) FROM notes"
            """,
        subcommands: [Migrate.self, Decrypt.self, Rekey.self, Check.self, Info.self, SQL.self, Schema.self, Recover.self, Header.self, KV.self, Envelope.self, Key.self, Backup.self, Restore.self]
    )

    /// Runs the command line. A file-size limit (`ulimit -f`) must not kill
    /// the process silently mid-write: with SIGXFSZ ignored, the write fails
    /// with EFBIG, the routine cleans up, and the error says what happened.
    /// A write to a closed pipe fails with EPIPE, reported like any failed
    /// write, instead of killing the process silently.
    static func main() {
        signal(SIGXFSZ, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        // Swift reads arguments as UTF-8, replacing what is not: two entry
        // names that differ only in invalid bytes would become one.
        for index in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[index], String(validatingCString: raw) != nil else {
                printError("Argument \(index) is not valid UTF-8: dbcrypt reads entry names, paths and SQL as UTF-8 text.")
                Foundation.exit(ExitCode.validationFailure.rawValue)
            }
        }
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.isEmpty {
            printError("Give a command: see 'dbcrypt --help'.")
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
        if let repeated = repeatedOption(in: arguments) {
            printError("\(repeated) is given more than once: give it once: see 'dbcrypt --help'.")
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch {
            exitReporting(error)
        }
    }

    /// The first option or flag named twice before a `--`, by any of its
    /// names (`-o A --output B`, `-oA`), which the parser would take the
    /// last of silently (`--key-env A --key-env B`).
    static func repeatedOption(in arguments: [String]) -> String? {
        let longNames = ["-o": "--output", "-h": "--help"]
        var seen: Set<String> = []
        for argument in arguments {
            if argument == "--" { break }
            guard argument.hasPrefix("-"), argument.count > 1, !argument.dropFirst().allSatisfy(\.isNumber) else { continue }
            let name = argument.hasPrefix("--") ? String(argument.prefix { $0 != "=" }) : longNames[String(argument.prefix(2))] ?? argument
            if !seen.insert(name).inserted { return name }
        }
        return nil
    }

    /// Exits for `error` as ArgumentParser does (help on stdout, exit codes
    /// as thrown), except that a usage error is one line on stderr, naming
    /// the help to read, instead of the whole usage.
    private static func exitReporting(_ error: Error) -> Never {
        let status = exitCode(for: error)
        guard status == .validationFailure else { exit(withError: error) }
        let names = configuration.subcommands.map { $0._commandName }
        let subcommand = CommandLine.arguments.dropFirst().first.flatMap { names.contains($0) ? $0 : nil }
        var message = message(for: error)
        while message.last == "." { message.removeLast() }
        printError("\(message): see 'dbcrypt\(subcommand.map { " " + $0 } ?? "") --help'.")
        Foundation.exit(status.rawValue)
    }
}
