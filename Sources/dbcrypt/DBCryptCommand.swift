import ArgumentParser
import DBCrypt
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

            dbcrypt --version prints its version, the linked SQLCipher's and SQLite's, and the \
            crypto provider in use.

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
        let arguments = currentSpelling(Array(CommandLine.arguments.dropFirst()))
        if arguments == ["--version"] {
            do {
                try StandardStreams.print(try versionText())
                Foundation.exit(0)
            } catch {
                exitFailing(error)
            }
        }
        if arguments.isEmpty {
            printError("Give a command: see 'dbcrypt --help'.")
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
        let kvNames = KV.configuration.subcommands.map { $0._commandName }
        if arguments.first == "kv", arguments.count > 2, !kvNames.contains(arguments[1]) {
            printError("\(displayed(arguments[2], limit: 32)) is not a kv command (\(kvNames.joined(separator: ", "))): see 'dbcrypt kv --help'.")
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
        if let repeated = repeatedOption(in: arguments) {
            printError("\(repeated) is given more than once: give it once: see 'dbcrypt --help'.")
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
        var command: ParsableCommand
        do { command = try parseAsRoot(arguments) } catch { exitReporting(error) }
        do {
            try command.run()
        } catch let error where error is any DBCryptError || !(error is ExitCode) && exitCode(for: error) == .failure {
            exitFailing(error)
        } catch {
            // ArgumentParser's own: help asked for, a usage error, a status to exit with.
            exitReporting(error)
        }
    }

    /// This build of dbcrypt.
    static let version = "0.1.0 (unreleased)"

    /// `dbcrypt --version`: dbcrypt's version, the linked SQLCipher's and
    /// its SQLite's, and which crypto provider does SQLCipher's cryptography.
    static func versionText() throws -> String {
        let library = try CipherInfo.linked()
        let provider = library.usesDBCryptProvider
            ? "\(library.provider), DBCrypt's own (it gives SQLCipher \(library.cipherVersion) the SQLCipher 4 format)"
            : "\(library.provider)\(library.providerVersion.map { " " + $0 } ?? ""), SQLCipher's own"
        return """
            dbcrypt \(version)
            SQLCipher \(library.cipherVersion) on SQLite \(library.sqliteVersion)
            crypto provider: \(provider)
            """
    }

    /// The first spellings of two commands, still read: `kv DB ACTION ...`
    /// (the database before the action) and `backup DB --continuous ...`.
    static func currentSpelling(_ arguments: [String]) -> [String] {
        var arguments = arguments
        let options = arguments.prefix { $0 != "--" }
        let kvNames = KV.configuration.subcommands.map { $0._commandName }
        if arguments.first == "kv", arguments.count > 2, kvNames.contains(arguments[2]), !kvNames.contains(arguments[1]) {
            arguments.swapAt(1, 2)
        } else if arguments.first == "backup", let flag = options.firstIndex(of: "--continuous") {
            arguments.remove(at: flag)
            arguments.insert(ContinuousBackupCommand._commandName, at: 1)
        }
        return arguments
    }

    /// The first option or flag named twice before a `--`, by any of its
    /// names (`-o A --output B`, `-oA`), which the parser would take the
    /// last of silently (`--key-env A --key-env B`). The names are the
    /// parser's own, from its description of the command being run.
    static func repeatedOption(in arguments: [String]) -> String? {
        let names = optionNames(of: arguments)
        var seen: Set<String> = []
        for argument in arguments {
            if argument == "--" { break }
            guard argument.hasPrefix("-"), argument.count > 1, !argument.dropFirst().allSatisfy(\.isNumber) else { continue }
            let written = argument.hasPrefix("--") ? String(argument.prefix { $0 != "=" }) : String(argument.prefix(2))
            let name = names[written] ?? written
            if !seen.insert(name).inserted { return name }
        }
        return nil
    }

    /// Each name (`-o`, `--output`) of the options of the command that
    /// `arguments` run, mapped to its preferred name; options that may be
    /// given more than once are left out. Only that command is described
    /// (a whole tree's description costs a fifth of a second in a debug build).
    private static func optionNames(of arguments: [String]) -> [String: String] {
        var type: ParsableCommand.Type = DBCryptCommand.self
        for argument in arguments {
            guard let next = type.configuration.subcommands.first(where: { ([$0._commandName] + $0.configuration.aliases).contains(argument) })
            else { break }
            type = next
        }
        if let next = type.configuration.defaultSubcommand { type = next }
        guard let dump = try? JSONSerialization.jsonObject(with: Data(type._dumpHelp().utf8)) as? [String: Any],
              let command = dump["command"] as? [String: Any] else { return [:] }
        func spelled(_ name: Any?) -> String? {
            guard let name = name as? [String: Any], let text = name["name"] as? String else { return nil }
            return (name["kind"] as? String == "short" ? "-" : "--") + text
        }
        var names: [String: String] = ["-h": "--help"]
        for option in command["arguments"] as? [[String: Any]] ?? [] where option["isRepeating"] as? Bool != true {
            guard let preferred = spelled(option["preferredName"]) else { continue }
            for name in option["names"] as? [[String: Any]] ?? [] { spelled(name).map { names[$0] = preferred } }
        }
        return names
    }

    /// Exits for `error` as ArgumentParser does (help on stdout, exit codes
    /// as thrown), except that a usage error is one line on stderr, naming
    /// the help to read, instead of the whole usage.
    private static func exitReporting(_ error: Error) -> Never {
        let status = exitCode(for: error)
        guard status == .validationFailure else { exit(withError: error) }
        let names = configuration.subcommands.flatMap { [$0._commandName] + $0.configuration.aliases }
        let subcommand = currentSpelling(Array(CommandLine.arguments.dropFirst())).first.flatMap { names.contains($0) ? $0 : nil }
        var message = message(for: error)
        while message.last == "." { message.removeLast() }
        printError("\(message): see 'dbcrypt\(subcommand.map { " " + $0 } ?? "") --help'.")
        Foundation.exit(status.rawValue)
    }
}
