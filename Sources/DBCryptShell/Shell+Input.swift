import DBCrypt
import Foundation

extension Shell {
    /// Runs a session on the database `queue` opened at `path` with `key`
    /// and `options`, and closes it: on a terminal (standard input is one),
    /// a prompt per line, the statements kept sealed when `keepsHistory`
    /// (for this session only on a plaintext database, which the host is
    /// told); otherwise the lines of standard input as a script. Returns
    /// whether the session failed, as sqlite3's exit status says: a script
    /// in which a statement failed, or a session that `.bail on` ended.
    ///
    /// - throws: ``DatabaseError`` when the database cannot be read or
    ///   closed, ``ShellError`` when standard input cannot be read, what
    ///   ``ShellHistory/sealed(for:key:note:)`` throws.
    public static func runSession(on queue: DatabaseQueue, path: String, key: DatabaseKey?, options: Database.Options,
                                  keepsHistory: Bool, host: Host) throws -> Bool {
        let interactive = isatty(STDIN_FILENO) == 1
        let shell = try Shell(queue: queue, path: path, key: key, options: options, interactive: interactive, host: host)
        if interactive {
            var history = ShellHistory.inMemory()
            if keepsHistory, let key { history = try ShellHistory.sealed(for: path, key: key, note: host.note) }
            if keepsHistory && key == nil { host.note("\(path) is plaintext: the history is kept for this session only.") }
            shell.runInteractive(history: history)
        } else {
            try shell.runScript(from: STDIN_FILENO)
        }
        try shell.close()
        return shell.hadError && (!interactive || shell.stoppedByError)
    }

    /// Runs the lines of `descriptor` (standard input that is not a
    /// terminal) as a script, to its end, `.quit`, or the first error with
    /// `.bail on`. ``hadError`` then says whether a statement failed.
    ///
    /// - throws: ``ShellError`` when the input cannot be read.
    public func runScript(from descriptor: Int32) throws {
        var lines = LineReader(descriptor: descriptor)
        while let line = try lines.next() {
            if feed(line) == .quit { return }
        }
        endOfInput()
    }

    /// Runs an interactive session on the terminal until `.quit` or Ctrl-D:
    /// libedit's line editing, Tab completion of keywords, tables and
    /// columns, and Ctrl-C stopping the running statement. Each statement
    /// (but one that holds a key) is offered to `history`.
    public func runInteractive(history: ShellHistory) {
        Interrupts.install()
        LineEditor.setUp()
        self.history = history
        history.loadIntoEditor()
        host.note("dbcrypt shell on \(path). Enter SQL ending with ';', or .help; Ctrl-D ends the session.")
        var statementLines: [String] = []
        var schemaVersion: Int?
        while true {
            schemaVersion = refreshCompletions(after: schemaVersion)
            switch LineEditor.read(prompt: isContinuing ? "   ...> " : "dbcrypt> ") {
            case .end:
                if isContinuing { endOfInput() }
                try? output.write("\n")
                return
            case let .interrupted(hadText):
                try? ShellOutput.standardOutput.write("\n")
                if isContinuing || hadText {
                    discardPending()
                    statementLines.removeAll()
                } else {
                    host.note("Ctrl-C stops a running statement: .quit or Ctrl-D ends the session.")
                }
            case let .line(bytes, interrupts):
                interruptsSeen = interrupts
                statementLines.append(String(decoding: bytes, as: UTF8.self))
                let flow = feed(bytes)
                if !isContinuing {
                    history.record(statementLines)
                    statementLines.removeAll()
                }
                if flow == .quit { return }
            }
        }
    }

    /// Sets what Tab completes: dot-commands, keywords, and the schema's
    /// tables and columns when it changed (`PRAGMA schema_version`).
    /// Returns the schema version read.
    private func refreshCompletions(after known: Int?) -> Int? {
        let version = try? queue.inDatabase { try $0.fetchScalar(Int.self, "PRAGMA schema_version") }
        guard version == nil || version != known else { return known }
        let names: [String] = (try? queue.inDatabase { db in
            let tables = try db.fetchAll(String.self, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")
            var names = tables
            for table in tables { names += try Shell.columnNames(of: SQLIdentifier.quoted(table), in: db) }
            return names
        }) ?? []
        // A name holding a control character is not offered: libedit would print it as it is.
        let words = Self.commands.map { "." + $0.name } + Self.keywords + names.filter { !$0.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } }
        LineEditor.candidates.withLock { $0 = Array(Set(words)).sorted() }
        return version
    }

    /// The SQL keywords Tab completes.
    static let keywords = """
        ABORT ALTER ANALYZE AND AS ASC ATTACH AUTOINCREMENT BEGIN BETWEEN BY CASE CAST CHECK COLLATE COMMIT CONFLICT \
        CONSTRAINT CREATE CROSS CURRENT_TIMESTAMP DEFAULT DELETE DESC DETACH DISTINCT DROP ELSE END ESCAPE EXCEPT EXISTS \
        EXPLAIN FOREIGN FROM GLOB GROUP HAVING IGNORE IN INDEX INNER INSERT INTERSECT INTO IS JOIN KEY LEFT LIKE LIMIT \
        NATURAL NOT NULL OFFSET ON OR ORDER OUTER PRAGMA PRIMARY QUERY REFERENCES REINDEX RELEASE RENAME REPLACE \
        RETURNING ROLLBACK SAVEPOINT SELECT SET TABLE TEMP THEN TO TRANSACTION TRIGGER UNION UNIQUE UPDATE USING VACUUM \
        VALUES VIEW VIRTUAL WHEN WHERE WITH WITHOUT RECURSIVE
        """.split(separator: " ").map(String.init)
}
