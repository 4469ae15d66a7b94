/// How the shell prints rows: the sqlite3 shell's modes of the same names.
public enum OutputMode: String, CaseIterable, Sendable {
    /// Values separated by `|`, one row per line.
    case list
    /// RFC 4180 CSV, rows ended by CRLF, quoted as the sqlite3 shell quotes.
    case csv
    /// One array of objects per statement, a row per line.
    case json
    /// Each value on a line of its own, `name: value`, rows apart.
    case line
    /// Values padded into columns, under centred headers and a rule of dashes.
    case column
    /// An ASCII-art table.
    case table
    /// A table drawn with box characters.
    case box
    /// A Markdown table.
    case markdown

    /// Whether the mode lays rows out in columns, and so reads every row
    /// before printing the first.
    var isColumnar: Bool { self == .column || self == .table || self == .box || self == .markdown }
}

/// One value of a result row as the shell prints it.
struct ShellValue {
    enum Kind { case null, integer, real, text, blob }

    let kind: Kind
    /// SQLite's text of the value (empty for NULL): `sqlite3_column_text`.
    let text: [UInt8]
    /// The value of a real, for JSON.
    let real: Double

    var isNumber: Bool { kind == .integer || kind == .real }
}
