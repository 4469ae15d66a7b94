import DBCrypt

/// Prints the rows of statements in one ``OutputMode``, as the shell does:
/// what `dbcrypt sql` prints for SQL given as an argument, and the shell
/// for each statement it runs.
public struct ResultPrinter {
    let formatter: RowFormatter

    /// A printer for rows read from `db`, in `mode`, with a header line
    /// (where the mode has one) when `headers`, and `nullValue` for NULL.
    /// With `exactReals`, a real reads back as the same value on every
    /// engine; without, it is written as the engine's sqlite3 shell writes
    /// it (15 significant digits before SQLite 3.47). Control characters
    /// in values and names are written as `escape` says (`^[` by default).
    ///
    /// - throws: ``DatabaseError`` when `db` cannot be read.
    public init(mode: OutputMode, headers: Bool, nullValue: [UInt8] = [], exactReals: Bool = false, escape: OutputEscape = .ascii,
                reading db: Database) throws {
        var formatter = RowFormatter(mode: mode, headers: headers, nullValue: nullValue, realTextIsExact: try RowFormatter.realTextIsExact(in: db))
        formatter.writesRealsExactly = exactReals
        formatter.escape = escape
        self.init(formatter)
    }

    init(_ formatter: RowFormatter) {
        self.formatter = formatter
    }

    /// Reads every row of `cursor` and hands their text to `emit`: in
    /// pieces of 256 rows in the modes that print row by row, at once in
    /// JSON and the column modes, which need every row first. A statement
    /// without rows prints nothing, as in the sqlite3 shell.
    ///
    /// - throws: what reading the rows or `emit` throws.
    public func print(_ cursor: RowCursor, _ emit: ([UInt8]) throws -> Void) throws {
        let columns = cursor.columnNames
        var rows: [[ShellValue]] = []
        var continuing = false
        while let row = try cursor.next() {
            rows.append((0..<row.count).map { ShellValue(row, $0) })
            if !formatter.mode.isColumnar && formatter.mode != .json && rows.count >= 256 {
                try emit(formatter.format(columns: columns, rows: rows, continuing: continuing))
                rows.removeAll(keepingCapacity: true)
                continuing = true
            }
        }
        try emit(formatter.format(columns: columns, rows: rows, continuing: continuing))
    }
}
