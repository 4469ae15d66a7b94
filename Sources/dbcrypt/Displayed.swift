/// `text` as a message may quote it: whatever could drive a terminal
/// (``Unicode/Scalar/drivesTheTerminal``, escape included) written out as
/// escapes (`\t`, `\n`, `\u{1B}`), so that a name, a path or a value quoted
/// back never moves the cursor, clears the screen or reorders the user's
/// terminal line. Past `limit` characters, the rest is cut and its length said.
///
/// For messages only: data that a command outputs (rows, values, keys
/// listed as JSON) is never changed.
func displayed(_ text: String, limit: Int? = nil) -> String {
    var shown = Substring(text)
    var cut = ""
    if let limit, text.count > limit {
        shown = text.prefix(limit)
        cut = "…(\(text.count) characters)"
    }
    var result = ""
    result.reserveCapacity(shown.utf8.count)
    for scalar in shown.unicodeScalars {
        switch scalar.value {
        case 0x09: result += "\\t"
        case 0x0A: result += "\\n"
        case 0x0D: result += "\\r"
        case _ where scalar.drivesTheTerminal:
            result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result + cut
}

/// A message of several lines, each `displayed`: its line breaks kept,
/// everything else that could drive a terminal escaped.
func displayedLines(_ text: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { displayed(String($0)) }.joined(separator: "\n")
}

extension Unicode.Scalar {
    /// Whether the scalar, written to a terminal, can move the cursor,
    /// clear the screen or reorder the line: C0, DEL and C1 controls, the
    /// line and paragraph separators, Unicode's bidirectional controls
    /// (marks, embeddings, overrides, isolates).
    var drivesTheTerminal: Bool {
        switch value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: true
        default: properties.isBidiControl
        }
    }
}
