/// Lays rows out in columns for the column, table, box and markdown modes,
/// as the newest sqlite3 shell does: headers centred, numbers to the right,
/// text to the left, a value of several lines over several lines (and then
/// a rule, or in column mode a blank line, between every two rows).
struct ColumnLayout {
    typealias Cell = (lines: [[UInt8]], right: Bool)

    let mode: OutputMode
    let headers: Bool

    /// The drawing characters of a mode: left, fill, middle, right of each
    /// kind of rule; the bars left of, between and right of the cells; the
    /// padding on each side of a cell.
    private struct Rules {
        let top: [String], header: [String], between: [String], bottom: [String]
        var bars = ["|", "|", "|"], padding = " "
    }

    private var rules: Rules {
        switch mode {
        case .box:
            return Rules(top: ["╭", "─", "┬", "╮"], header: ["╞", "═", "╪", "╡"], between: ["├", "─", "┼", "┤"],
                         bottom: ["╰", "─", "┴", "╯"], bars: ["│", "│", "│"])
        case .markdown:
            return Rules(top: [], header: ["|", "-", "|", "|"], between: [], bottom: [])
        case .column:
            // Trailing spaces are trimmed: the rule between rows is a blank line.
            return Rules(top: [], header: ["", "-", "  ", ""], between: ["", " ", "  ", ""], bottom: [], bars: ["", "  ", ""], padding: "")
        default:
            let rule = ["+", "-", "+", "+"]
            return Rules(top: rule, header: rule, between: rule, bottom: rule)
        }
    }

    func render(columns: [String], rows: [[Cell]]) -> [UInt8] {
        let names = columns.map { [Array($0.utf8)] }
        var widths = names.map { headers ? width($0[0]) : 0 }
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.lines.map(width).max() ?? 0) }
        }
        let rules = self.rules
        var out: [UInt8] = []
        func end(_ line: [UInt8]) {
            out += mode == .column ? line[..<(line.lastIndex { $0 != 32 }.map { $0 + 1 } ?? 0)] : line[...]
            out.append(10)
        }
        func rule(_ parts: [String]) {
            guard !parts.isEmpty else { return }
            let fills = widths.map { String(repeating: parts[1], count: $0 + 2 * rules.padding.count) }
            end(Array((parts[0] + fills.joined(separator: parts[2]) + parts[3]).utf8))
        }
        func line(_ cells: [[UInt8]], right: [Bool], centred: Bool) {
            var text = Array(rules.bars[0].utf8)
            for (index, cell) in cells.enumerated() {
                let gap = widths[index] - width(cell)
                let left = centred ? gap / 2 : right[index] ? gap : 0
                if index > 0 { text += Array(rules.bars[1].utf8) }
                text += Array((rules.padding + String(repeating: " ", count: left)).utf8) + cell
                text += Array((String(repeating: " ", count: gap - left) + rules.padding).utf8)
            }
            end(text + Array(rules.bars[2].utf8))
        }
        func record(_ cells: [Cell], centred: Bool = false) {
            let height = cells.map(\.lines.count).max() ?? 1
            for lineIndex in 0..<height {
                line(cells.map { lineIndex < $0.lines.count ? $0.lines[lineIndex] : [] }, right: cells.map(\.right), centred: centred)
            }
        }
        rule(rules.top)
        if headers {
            record(names.map { (lines: $0, right: false) }, centred: true)
            rule(rules.header)
        }
        let ruled = rows.contains { $0.contains { $0.lines.count > 1 } }
        for (index, row) in rows.enumerated() {
            if ruled && index > 0 { rule(rules.between) }
            record(row)
        }
        rule(rules.bottom)
        return out
    }

    /// Characters, not bytes: UTF-8 continuation bytes take no column.
    private func width(_ bytes: [UInt8]) -> Int {
        bytes.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
    }
}
