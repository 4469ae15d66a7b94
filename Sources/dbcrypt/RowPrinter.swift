import DBCrypt
import DBCryptCore
import Foundation

/// Prints result rows as an aligned table, JSON or CSV.
struct RowPrinter {
    enum Style { case table, json, csv }

    let style: Style

    func print(_ cursor: RowCursor) throws {
        let columns = cursor.columnNames
        var rows: [[DatabaseValue]] = []
        while let row = try cursor.next() { rows.append((0..<row.count).map { row[$0] }) }
        let text: String
        switch style {
        case .table: text = table(columns, rows)
        case .json: text = JSONValue.array(rows.map { row in .object(zip(columns, row.map(JSONValue.init)).map { ($0, $1) }) }).encoded
        case .csv: text = ([columns.map(csvField)] + rows.map { $0.map { csvField($0.csvText) } }).map { $0.joined(separator: ",") }.joined(separator: "\r\n")
        }
        // CSV ends every record with CRLF (RFC 4180), the last one too.
        try StandardStreams.write(Data((text + (style == .csv ? "\r\n" : "\n")).utf8))
    }

    private func table(_ columns: [String], _ rows: [[DatabaseValue]]) -> String {
        let cells = rows.map { $0.map(\.tableText) }
        let widths = columns.indices.map { i in ([columns[i]] + cells.map { $0[i] }).map(\.count).max() ?? 0 }
        func line(_ values: [String]) -> String {
            zip(values, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        return ([line(columns), line(widths.map { String(repeating: "-", count: $0) })] + cells.map(line))
            .joined(separator: "\n")
    }

    private func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

private extension DatabaseValue {
    var tableText: String {
        switch self {
        case .null: return "NULL"
        case let .integer(v): return String(v)
        case let .real(d): return String(d)
        case let .text(s): return s
        case let .blob(d): return "x'" + Hex.encode(d.prefix(16)) + (d.count > 16 ? "…'" : "'")
        }
    }

    var csvText: String {
        switch self {
        case .null: return ""
        case let .integer(v): return String(v)
        case let .real(d): return String(d)
        case let .text(s): return s
        case let .blob(d): return d.base64EncodedString()
        }
    }
}

/// A JSON value, written by hand so that key order is kept and no
/// Foundation JSON quirks (escaped slashes) appear.
indirect enum JSONValue {
    case null
    case bool(Bool)
    case number(Double)
    case integer(Int64)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    init(_ value: DatabaseValue) {
        switch value {
        case .null: self = .null
        case let .integer(v): self = .integer(v)
        case let .real(d): self = .number(d)
        case let .text(s): self = .string(s)
        case let .blob(d): self = .string(d.base64EncodedString())
        }
    }

    var encoded: String {
        switch self {
        case .null: return "null"
        case let .bool(b): return b ? "true" : "false"
        case let .integer(v): return String(v)
        case let .number(d): return d.isFinite ? (d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)) : "null"
        case let .string(s): return Self.quote(s)
        case let .array(values): return "[" + values.map(\.encoded).joined(separator: ",") + "]"
        case let .object(members): return "{" + members.map { Self.quote($0) + ":" + $1.encoded }.joined(separator: ",") + "}"
        }
    }

    /// The value as plain text, for the non-JSON output.
    var plain: String {
        switch self {
        case let .string(s): return s
        default: return encoded
        }
    }

    private static func quote(_ s: String) -> String {
        "\"" + escaped(s) + "\""
    }

    /// `s` as the inside of a JSON string, on one line: quotes, backslashes,
    /// control characters and line separators escaped, so that no two
    /// strings print alike (`kv list` prints names this way).
    static func escaped(_ s: String) -> String {
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where [.control, .lineSeparator, .paragraphSeparator].contains(scalar.properties.generalCategory):
                out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
