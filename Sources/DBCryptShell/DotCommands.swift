import DBCrypt
import DBCryptCore
import Foundation

extension Shell {
    /// The dot-commands, with what `.help` says of each.
    static let commands: [(name: String, usage: String, help: String)] = [
        ("backup", ".backup FILE [--new-key|--plaintext]", "Write a copy of the database to FILE, under the same key unless told"),
        ("bail", ".bail on|off", "Stop at the first error"),
        ("changes", ".changes on|off", "Print the rows each statement changed"),
        ("cipher", ".cipher", "The file's cipher settings and format"),
        ("dump", ".dump [TABLE]", "The database (or one table) as SQL text: plaintext"),
        ("headers", ".headers on|off", "Print column names"),
        ("help", ".help", "This list"),
        ("import", ".import [--skip N] FILE TABLE", "Insert the rows of a CSV file (its first row names a new table's columns)"),
        ("indexes", ".indexes [TABLE]", "The names of the indexes (of TABLE)"),
        ("mode", ".mode [MODE] [--escape E]", "Print rows as " + OutputMode.allCases.map(\.rawValue).joined(separator: ", ")
            + "; control characters as ^[ (ascii, the default), symbols (symbol) or as they are (off)"),
        ("nullvalue", ".nullvalue TEXT", "Print NULL as TEXT"),
        ("once", ".once FILE", "Write the next statement's rows to FILE (plaintext)"),
        ("output", ".output [FILE]", "Write rows to FILE (plaintext), or to standard output again"),
        ("pager", ".pager on|off", "Show results longer than the terminal through $PAGER (else less)"),
        ("quit", ".quit", "End the session (Ctrl-D too)"),
        ("read", ".read FILE", "Run the SQL and commands of FILE"),
        ("rekey", ".rekey", "Change the database's key (asks twice; no other connection may be open)"),
        ("schema", ".schema [PATTERN]", "The CREATE statements (of the tables matching PATTERN)"),
        ("tables", ".tables [PATTERN]", "The names of the tables and views (matching PATTERN)"),
        ("timer", ".timer on|off", "Print how long each statement took"),
    ]

    /// Runs one dot-command line.
    func dotCommand(_ line: String) -> Flow {
        let arguments: [String]
        do {
            arguments = try Self.splitArguments(String(line.dropFirst()))
        } catch {
            return fail("\(error)")
        }
        guard let word = arguments.first else { return fail("Give a command after the dot: see .help.") }
        let matches = Self.commands.filter { $0.name.hasPrefix(word.lowercased()) }
        let name = word == "exit" ? "quit" : word == "indices" ? "indexes" : matches.count == 1 ? matches[0].name : word
        let rest = Array(arguments.dropFirst())
        do {
            switch name {
            case "quit": return .quit
            case "help":
                let width = Self.commands.map(\.usage.count).max() ?? 0
                try output.write(Self.commands.map { $0.usage.padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.help + "\n" }.joined())
            case "mode":
                if rest.isEmpty {
                    try output.write("current output mode: \(mode.rawValue)\(escape == .ascii ? "" : " --escape \(escape.rawValue)")\n")
                    return .proceed
                }
                var words = rest[...], chosenEscape = escape
                if let flag = words.firstIndex(of: "--escape") {
                    guard flag + 1 < words.endIndex, let named = OutputEscape(rawValue: words[flag + 1].lowercased()) else {
                        return fail(".mode --escape takes one of: \(OutputEscape.allCases.map(\.rawValue).joined(separator: ", ")).")
                    }
                    chosenEscape = named
                    words.removeSubrange(flag...flag + 1)
                }
                if words.count > 1 { return fail(".mode takes one mode: \(words.dropFirst().first!) is one word too many.") }
                guard let chosen = words.first.map({ OutputMode(rawValue: $0.lowercased()) }) ?? mode else {
                    return fail(".mode takes one of: \(OutputMode.allCases.map(\.rawValue).joined(separator: ", ")), and --escape ascii|symbol|off.")
                }
                (mode, escape) = (chosen, chosenEscape)
                if !headersGiven { headers = chosen.isColumnar }
            case "headers": (headers, headersGiven) = (try Self.flag(rest, name), true)
            case "bail": bail = try Self.flag(rest, name)
            case "timer": timer = try Self.flag(rest, name)
            case "changes": showsChanges = try Self.flag(rest, name)
            case "pager": pager = try Self.flag(rest, name)
            case "nullvalue":
                guard rest.count == 1 else { return fail(".nullvalue takes one text.") }
                nullValue = Array(rest[0].utf8)
            case "tables", "indexes":
                guard rest.count <= 1 else { return fail(".\(name) takes at most one pattern.") }
                try listNames(indexes: name == "indexes", matching: rest.first)
            case "schema":
                guard rest.count <= 1 else { return fail(".schema takes at most one pattern.") }
                try printSchema(matching: rest.first)
            case "output", "once":
                guard rest.count <= 1, name == "output" || rest.count == 1 else { return fail(".\(name) takes one file name.") }
                // The new file first: a path that fails leaves the output as it was.
                let next = try rest.first.flatMap { $0 == "stdout" ? nil : try ShellOutput.file($0, notOverwriting: path) } ?? .standardOutput
                output.close()
                output = next
                outputIsOnce = name == "once" && next.path != nil
            case "read":
                guard rest.count == 1 else { return fail(".read takes one file name.") }
                return try read(rest[0])
            case "import":
                var names = rest.filter { $0 != "--csv" }, skip = 0
                if let flag = names.firstIndex(of: "--skip"), flag + 1 < names.count, let count = Int(names[flag + 1]), count >= 0 {
                    skip = count
                    names.removeSubrange(flag...flag + 1)
                }
                guard names.count == 2, !names.contains(where: { $0.hasPrefix("--") }) else {
                    return fail(".import takes a CSV file and a table: .import [--skip N] FILE TABLE.")
                }
                try importCSV(names[0], into: names[1], skipping: skip)
            case "dump":
                guard rest.count <= 1 else { return fail(".dump takes at most one table.") }
                let toTerminal = output.path == nil && isatty(STDOUT_FILENO) == 1
                if toTerminal && interactive { host.note("Note: .dump writes the database as plaintext SQL.") }
                try dump(table: rest.first, escape: toTerminal ? escape : .off)
            case "backup":
                let files = rest.filter { !$0.hasPrefix("--") }, flags = Set(rest).subtracting(files)
                guard files.count == 1, flags.isSubset(of: ["--new-key", "--plaintext"]), flags.count < 2 else {
                    return fail(".backup takes one file name, and --new-key (asked for, or the --new-key option given) or --plaintext.")
                }
                if flags.contains("--plaintext") && interactive { host.note("Note: .backup --plaintext writes a copy anyone who can read it can read.") }
                if flags.contains("--new-key") {
                    let cipher = try queue.inDatabase { $0.cipher } ?? .sqlcipher4
                    try host.newKey({ $0.mayOpen(files[0], cipher: cipher) }) { try queue.backup(to: files[0], key: .using($0)) }
                } else {
                    try queue.backup(to: files[0], key: flags.isEmpty ? .sameAsDatabase : .plaintext)
                }
            case "cipher":
                guard rest.isEmpty else { return fail(".cipher takes no argument.") }
                try output.write(host.cipherReport(key) + "\n")
            case "rekey":
                guard rest.isEmpty else { return fail(".rekey takes no argument: it asks for the new key.") }
                try rekey()
            default:
                return fail("Unknown command .\(word): see .help.")
            }
        } catch let error as ShellError {
            return fail(error.description)
        } catch {
            return fail(Self.message(error))
        }
        return .proceed
    }

    /// `on` or `off` (yes/no, true/false, 1/0).
    static func flag(_ arguments: [String], _ name: String) throws -> Bool {
        switch arguments.count == 1 ? arguments[0].lowercased() : "" {
        case "on", "yes", "true", "1": return true
        case "off", "no", "false", "0": return false
        default: throw ShellError(".\(name) takes on or off.")
        }
    }

    /// A dot-command's words: separated by blanks, a quoted word (`'...'`
    /// as is, `"..."` with backslash escapes) may hold blanks.
    static func splitArguments(_ line: String) throws -> [String] {
        var words: [String] = []
        var scalars = Array(line.unicodeScalars)[...]
        while true {
            while let first = scalars.first, first == " " || first == "\t" || first == "\r" { scalars.removeFirst() }
            guard let first = scalars.first else { return words }
            var word = ""
            if first == "'" || first == "\"" {
                scalars.removeFirst()
                var closed = false
                while let next = scalars.popFirst() {
                    if next == first { closed = true; break }
                    if first == "\"", next == "\\", let escaped = scalars.popFirst() {
                        switch escaped {
                        case "n": word += "\n"
                        case "t": word += "\t"
                        default: word.unicodeScalars.append(escaped)
                        }
                    } else {
                        word.unicodeScalars.append(next)
                    }
                }
                guard closed else { throw ShellError("A quoted argument is not closed: add its closing \(first).") }
            } else {
                while let next = scalars.first, next != " ", next != "\t", next != "\r" {
                    word.unicodeScalars.append(next)
                    scalars.removeFirst()
                }
            }
            words.append(word)
        }
    }

    /// `.read FILE`: the file's lines through this session, then back to the input.
    private func read(_ file: String) throws -> Flow {
        guard readDepth < 16 else { throw ShellError(".read is nested more than 16 deep: does \(file) read itself?") }
        guard let handle = FileHandle(forReadingAtPath: file) else {
            throw ShellError("Cannot read \(file): \(String(cString: strerror(errno))).")
        }
        defer { try? handle.close() }
        let savedLine = lineNumber
        readDepth += 1
        lineNumber = 0
        defer {
            readDepth -= 1
            lineNumber = savedLine
        }
        var lines = LineReader(descriptor: handle.fileDescriptor)
        let interrupts = Interrupts.received
        while let line = try lines.next() {
            if Interrupts.received != interrupts { throw ShellError(".read \(file) stopped at line \(lineNumber): interrupted.") }
            interruptsSeen = interrupts
            if feed(line) == .quit { return .quit }
        }
        endOfInput()
        return hadError && bail ? .quit : .proceed
    }

    /// `.tables` and `.indexes`: names in columns across 80 characters, as the sqlite3 shell lays them.
    private func listNames(indexes: Bool, matching pattern: String?) throws {
        let found: [String] = try queue.inDatabase { db in
            if indexes {
                return try db.fetchAll(String.self, "SELECT name FROM sqlite_master WHERE type = 'index' AND (?1 IS NULL OR tbl_name LIKE ?1) ORDER BY name", [pattern])
            }
            return try db.fetchAll(String.self, """
                SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                AND (?1 IS NULL OR name LIKE ?1) ORDER BY name
                """, [pattern])
        }
        guard !found.isEmpty else { return }
        let names: [String] = found.map(escape.apply)
        let width = names.map(\.count).max()!
        let columns = max(1, 80 / (width + 2))
        let rows = (names.count + columns - 1) / columns
        var text = ""
        for row in 0..<rows {
            let line = stride(from: row, to: names.count, by: rows).map { names[$0].padding(toLength: width, withPad: " ", startingAt: 0) }
            text += line.joined(separator: "  ").replacingOccurrences(of: " +$", with: "", options: .regularExpression) + "\n"
        }
        try output.write(text)
    }

    /// `.schema`: every CREATE statement, each ended by a semicolon, in the
    /// order they were made (as the sqlite3 shell lists them).
    private func printSchema(matching pattern: String?) throws {
        let statements: [String] = try queue.inDatabase { db in
            try db.fetchAll(String.self, """
                SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                AND (?1 IS NULL OR tbl_name LIKE ?1 OR name LIKE ?1) ORDER BY rowid
                """, [pattern])
        }
        try output.write(statements.map { escape.apply($0) + ";\n" }.joined())
    }
}

extension Shell {
    /// `.rekey`: the new key, then the crash-safe routine on the closed
    /// database, which opens again under the new key (or, when the routine
    /// fails, under the old one).
    func rekey() throws {
        guard let current = key else { throw ShellError("\(path) is plaintext: .rekey changes the key of an encrypted database.") }
        if try queue.inDatabase({ $0.isInsideTransaction }) {
            throw ShellError("A transaction is open: COMMIT or ROLLBACK it first (.rekey closes the connection).")
        }
        let cipher = try queue.inDatabase { $0.cipher } ?? .sqlcipher4
        try host.newKey({ $0.mayOpen(path, cipher: cipher) }) { replacement in
            try queue.close()
            do {
                try host.changeKey(current, cipher, replacement)
            } catch {
                // The file holds one of the two keys: open it again with that one.
                do {
                    queue = try DatabaseQueue(path: path, key: current, options: options)
                } catch {
                    queue = try DatabaseQueue(path: path, key: replacement, options: options)
                    key = replacement
                    try? history.rekey(replacement)
                }
                throw error
            }
            try adopt(replacement)
        }
        host.note("Changed the key of \(path).")
    }

    /// Goes on under `replacement`, the database's key now: the queue opens
    /// again with it (so that `.backup` and `.cipher` use it), and the
    /// history is sealed under it.
    ///
    /// - throws: what opening with `replacement` throws (a wrong key: the
    ///   queue stays as it was).
    func adopt(_ replacement: DatabaseKey) throws {
        let reopened = try DatabaseQueue(path: path, key: replacement, options: options)
        try? queue.close()
        queue = reopened
        key = replacement
        try history.rekey(replacement)
    }

    /// The new key of a typed `PRAGMA rekey = '...'` (a passphrase, or a
    /// raw key `x'...'`), `textrekey`, or `hexrekey = '...'` (a passphrase
    /// in hex), alone in `text` but for comments; nil for another statement.
    static func typedNewKey(in text: String) -> DatabaseKey? {
        let pattern = #"(?is)^\s*PRAGMA\s+(?:["'`\[]?main["'`\]]?\s*\.\s*)?["'`\[]?(hex|text)?rekey["'`\]]?\s*(?:=\s*|\(\s*)(?:'((?:[^']|'')*)'|"((?:[^"]|"")*)"|([A-Za-z0-9_]+))\s*\)?\s*;?\s*$"#
        let statement = SQLText.removingComments(text)
        guard let match = try? NSRegularExpression(pattern: pattern).firstMatch(in: statement, range: NSRange(statement.startIndex..., in: statement)) else {
            return nil
        }
        func group(_ index: Int) -> String? { Range(match.range(at: index), in: statement).map { String(statement[$0]) } }
        let value = group(2)?.replacingOccurrences(of: "''", with: "'") ?? group(3)?.replacingOccurrences(of: "\"\"", with: "\"") ?? group(4) ?? ""
        if group(1)?.lowercased() == "hex" {
            guard let bytes = Hex.decode(Array(value.utf8)) else { return nil }
            return .passphrase(bytes: bytes)
        }
        return (try? DatabaseKey(sqlcipherRawKey: value)) ?? .passphrase(value)
    }

    /// Whether `text` changes the key with a pragma (`rekey`, `hexrekey`,
    /// `textrekey`), in any form SQLite reads.
    static func changesKey(_ text: String) -> Bool {
        SQLText.removingComments(text).range(of: #"(?is)\bPRAGMA\s+([\w"'`\[\]]+\s*\.\s*)?["'`\[]?(text|hex)?rekey\b"#, options: .regularExpression) != nil
    }
}
