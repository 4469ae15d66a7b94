import CSQLCipher
import DBCrypt
import Foundation

/// Writes one statement's rows in an ``OutputMode``, byte for byte as the
/// sqlite3 shell does in CSV and JSON (the modes scripts parse), and as its
/// newest version lays out the others.
struct RowFormatter {
    let mode: OutputMode
    let headers: Bool
    let nullValue: [UInt8]
    /// How control characters in values and column names are written
    /// (JSON escapes its own).
    var escape: OutputEscape = .ascii
    /// Whether the engine writes a real as text exactly (SQLite 3.47 and
    /// later): then JSON takes that text, as those shells do; before, the
    /// shell wrote `%!.20g`.
    let realTextIsExact: Bool
    /// Whether a real is written exactly where the engine's text of it is
    /// not (before SQLite 3.47: 15 digits): `dbcrypt sql`'s rows, which are
    /// data; the shell writes what the engine's sqlite3 shell writes.
    var writesRealsExactly = false

    /// The bytes for `rows` under `columns`: nothing at all for no rows, as
    /// the shell prints no headers then. `continuing` says that earlier rows
    /// of the same statement were printed already (by modes that print row
    /// by row), so no header and, in line mode, a blank line first.
    func format(columns: [String], rows: [[ShellValue]], continuing: Bool = false) -> [UInt8] {
        guard !rows.isEmpty else { return [] }
        let headers = headers && !continuing
        let names = columns.map { escape.apply(Array($0.utf8)) }
        var out: [UInt8] = []
        switch mode {
        case .list:
            if headers { out += join(names, "|") + [10] }
            for row in rows { out += join(row.map(shown), "|") + [10] }
        case .csv:
            if headers { out += join(columns.map { csvField(Array($0.utf8)) }, ",") + [13, 10] }
            for row in rows { out += join(row.map { $0.kind == .null ? nullValue : csvField(text($0)) }, ",") + [13, 10] }
        case .json:
            for (index, row) in rows.enumerated() {
                out += Array((index == 0 ? "[{" : ",\n{").utf8)
                for (position, (name, value)) in zip(columns, row).enumerated() {
                    if position > 0 { out.append(UInt8(ascii: ",")) }
                    out += jsonString(Array(name.utf8)) + [UInt8(ascii: ":")] + json(value)
                }
                out.append(UInt8(ascii: "}"))
            }
            if !rows.isEmpty { out += Array("]\n".utf8) }
        case .line:
            let labels = names.map { String(decoding: $0, as: UTF8.self) }
            let width = labels.map(\.count).max() ?? 0
            for (index, row) in rows.enumerated() {
                if index > 0 || continuing { out.append(10) }
                for (name, value) in zip(labels, row) {
                    let label = String(repeating: " ", count: width - name.count) + name + ": "
                    let lines = split(lines: shown(value))
                    out += Array(label.utf8) + lines[0] + [10]
                    for more in lines.dropFirst() { out += Array(String(repeating: " ", count: label.count).utf8) + more + [10] }
                }
            }
        case .column, .table, .box, .markdown:
            // Escaped, a carriage return before a newline ends a line of the cell with it (as in sqlite3 3.53).
            let cell = { (value: ShellValue) in escape == .off || value.kind == .null ? shown(value) : shown(value).replacing([13, 10], with: [10]) }
            out = ColumnLayout(mode: mode, headers: headers).render(
                columns: names.map { String(decoding: $0, as: UTF8.self) },
                rows: rows.map { $0.map { (lines: split(lines: expandingTabs(cell($0))), right: $0.isNumber) } })
        }
        return out
    }

    /// Whether the engine of `db` writes a real as text exactly: asked of
    /// it once, rather than read from a version.
    static func realTextIsExact(in db: Database) throws -> Bool {
        try db.fetchScalar(String.self, "SELECT CAST(0.1 + 0.2 AS TEXT)") == "0.30000000000000004"
    }

    /// A value's text with its control characters escaped; NULL as
    /// `nullValue`, which the user wrote and which is not escaped (as in sqlite3).
    private func shown(_ value: ShellValue) -> [UInt8] {
        value.kind == .null ? nullValue : escape.apply(text(value))
    }

    private func text(_ value: ShellValue) -> [UInt8] {
        switch value.kind {
        case .null: return nullValue
        case .real where writesRealsExactly && !realTextIsExact: return exactText(value.real)
        default: return value.text
        }
    }

    /// The engine's 15 digits of `real` when they read back as it, else 17, which always do.
    private func exactText(_ real: Double) -> [UInt8] {
        let short = sqlitePrintf("%!.15g", real)
        return Double(String(decoding: short, as: UTF8.self)) == real ? short : sqlitePrintf("%!.17g", real)
    }

    private func join(_ parts: [[UInt8]], _ separator: String) -> [UInt8] {
        Array(parts.joined(separator: Array(separator.utf8)))
    }

    /// A CSV field as the sqlite3 shell writes it: quoted when it is empty
    /// or holds a control character, a space, a quote of either kind, a
    /// comma or any byte past ASCII; inner double quotes doubled; control
    /// characters then escaped.
    private func csvField(_ bytes: [UInt8]) -> [UInt8] {
        let needsQuotes = bytes.isEmpty || bytes.contains { $0 < 0x21 || $0 == 0x22 || $0 == 0x27 || $0 == 0x2C || $0 >= 0x7F }
        guard needsQuotes else { return bytes }
        var out: [UInt8] = [0x22]
        for byte in escape.apply(bytes) {
            out.append(byte)
            if byte == 0x22 { out.append(0x22) }
        }
        out.append(0x22)
        return out
    }

    private func json(_ value: ShellValue) -> [UInt8] {
        switch value.kind {
        case .null: return Array("null".utf8)
        case .integer: return value.text
        case .real:
            if value.real == .infinity { return Array("9.0e+999".utf8) }
            if value.real == -.infinity { return Array("-9.0e+999".utf8) }
            return realTextIsExact ? value.text : writesRealsExactly ? exactText(value.real) : sqlitePrintf("%!.20g", value.real)
        case .text: return jsonString(value.text)
        case .blob:
            // Each byte as a code point, as the shell writes a blob.
            return Array(("\"" + value.text.map { hex4($0) }.joined() + "\"").utf8)
        }
    }

    private func hex4(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return "\\u00" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
    }

    /// `bytes` as a JSON string: quote, backslash and control characters escaped, the rest as is.
    private func jsonString(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x22]
        for byte in bytes {
            switch byte {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x08: out += [0x5C, UInt8(ascii: "b")]
            case 0x0C: out += [0x5C, UInt8(ascii: "f")]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case ..<0x20: out += Array(hex4(byte).utf8)
            default: out.append(byte)
            }
        }
        out.append(0x22)
        return out
    }

    private func split(lines bytes: [UInt8]) -> [[UInt8]] {
        bytes.split(separator: 10, omittingEmptySubsequences: false).map(Array.init)
    }

    /// Tabs replaced by spaces to the next multiple of 8 columns, as the shell lays a cell out.
    private func expandingTabs(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.contains(9) else { return bytes }
        var out: [UInt8] = []
        var column = 0
        for byte in bytes {
            if byte == 9 {
                repeat { out.append(32); column += 1 } while column % 8 != 0
            } else {
                out.append(byte)
                column = byte == 10 ? 0 : (byte & 0xC0 == 0x80 ? column : column + 1)
            }
        }
        return out
    }
}

/// `value` printed by the engine's own `printf` with `format`.
func sqlitePrintf(_ format: String, _ value: Double) -> [UInt8] {
    withVaList([value]) { arguments in
        guard let text = sqlite3_vmprintf(format, arguments) else { return [] }
        defer { sqlite3_free(text) }
        return Array(UnsafeBufferPointer(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text)))
    }
}
