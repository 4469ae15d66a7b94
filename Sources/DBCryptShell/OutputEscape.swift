/// How the shell writes the control characters of what it prints from a
/// database (values, column names, the names `.tables` and `.schema` list),
/// as the sqlite3 shell's `.mode --escape` does (SQLite 3.50 and later,
/// whose default is `ascii`): what a database holds cannot move the cursor,
/// recolour or clear the terminal it is shown on.
public enum OutputEscape: String, CaseIterable, Sendable {
    /// A caret and a letter: `^[` for ESC, `^G` for BEL, `^M` for a lone
    /// carriage return. The default.
    case ascii
    /// Unicode's control pictures: `␛` for ESC.
    case symbol
    /// The bytes as they are (sqlite3 before 3.50, and data meant for a file).
    case off

    /// `bytes` with every C0 control character written this way, except a
    /// tab, a newline and a carriage return before a newline, which lay text out.
    func apply(_ bytes: [UInt8]) -> [UInt8] {
        guard self != .off, bytes.contains(where: { $0 < 0x20 && $0 != 9 && $0 != 10 }) else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 8)
        for (index, byte) in bytes.enumerated() {
            let laysOut = byte >= 0x20 || byte == 9 || byte == 10 || (byte == 13 && index + 1 < bytes.count && bytes[index + 1] == 10)
            if laysOut {
                out.append(byte)
            } else if self == .ascii {
                out += [UInt8(ascii: "^"), byte + 0x40]
            } else {
                out += [0xE2, 0x90, 0x80 + byte]   // U+2400 + byte
            }
        }
        return out
    }

    /// `text` written this way.
    func apply(_ text: String) -> String {
        String(decoding: apply(Array(text.utf8)), as: UTF8.self)
    }
}
