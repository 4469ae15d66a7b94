import CSQLCipher
import Foundation

/// What DBCrypt needs to know of SQL text without compiling it: whether a
/// tail holds no statement, where a statement that failed to compile ends,
/// and a statement's first keyword. Byte-level, following SQLite's tokenizer
/// for the parts that matter here: whitespace, `--` and `/* */` comments,
/// and quoted strings and names.
package enum SQLText {
    /// Whether `bytes` hold only whitespace, semicolons and comments: what
    /// SQLite would compile to no statement at all.
    static func isBlank(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: ";") { index += 1; continue }
            let next = skipSpaceAndComments(bytes, from: index)
            guard next > index else { return false }
            index = next
        }
        return true
    }

    /// The index of the first byte past whitespace and comments from `start`
    /// (`start` itself when there are none). An unterminated `/*` is a
    /// comment to the end, as SQLite takes it.
    static func skipSpaceAndComments(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 32 || (9...13).contains(byte) {
                index += 1
            } else if byte == UInt8(ascii: "-"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "-") {
                while index < bytes.count, bytes[index] != 10 { index += 1 }
            } else if byte == UInt8(ascii: "/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "*") {
                index += 2
                while index + 1 < bytes.count, !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/")) {
                    index += 1
                }
                index = min(index + 2, bytes.count)
            } else {
                break
            }
        }
        return index
    }

    /// Whether a comment (`--` or `/*`) starts at `index`.
    static func commentStarts(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        index + 1 < bytes.count
            && ((bytes[index] == UInt8(ascii: "-") && bytes[index + 1] == UInt8(ascii: "-"))
                || (bytes[index] == UInt8(ascii: "/") && bytes[index + 1] == UInt8(ascii: "*")))
    }

    /// For a quoted name (`"`, `` ` ``, `[`) or a string that starts at
    /// `index`, the index past its closing quote, or the end of `bytes`
    /// (a doubled quote inside ends one run and starts the next, which
    /// copying joins up again).
    static func quotedRunEnd(_ bytes: UnsafeBufferPointer<UInt8>, from index: Int) -> Int {
        let closing = bytes[index] == UInt8(ascii: "[") ? UInt8(ascii: "]") : bytes[index]
        var end = index + 1
        while end < bytes.count {
            end += 1
            if bytes[end - 1] == closing { break }
        }
        return end
    }

    /// The first keyword of the statement in `bytes`, upper-cased, after any
    /// leading whitespace and comments ("" when there is none).
    static func firstKeyword(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        var index = skipSpaceAndComments(bytes, from: 0)
        var keyword: [UInt8] = []
        while index < bytes.count, keyword.count < 16 {
            let byte = bytes[index]
            guard (65...90).contains(byte) || (97...122).contains(byte) else { break }
            keyword.append(byte & ~0x20)
            index += 1
        }
        return String(decoding: keyword, as: UTF8.self)
    }

    /// The length of the first complete statement of `bytes` (up to and
    /// including its semicolon, so a trigger's body stays whole), or all of
    /// `bytes` when no prefix is complete. Used to quote a statement that
    /// failed to compile in full, where SQLite's tail stops at the error.
    static func firstStatementLength(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var candidate: [CChar] = []
        candidate.reserveCapacity(bytes.count + 1)
        for (index, byte) in bytes.enumerated() {
            candidate.append(CChar(bitPattern: byte))
            guard byte == UInt8(ascii: ";") else { continue }
            candidate.append(0)
            defer { candidate.removeLast() }
            if sqlite3_complete(candidate) != 0 { return index + 1 }
        }
        return bytes.count
    }

    /// `bytes` as text with every string literal replaced by `'<redacted>'`
    /// (a blob literal `x'..'` becomes `x'<redacted>'`): how a statement is
    /// quoted in errors, since a literal may hold a key or a private value.
    /// Comments and quoted names are kept as they are; an unterminated
    /// literal is redacted to the end. In text that mentions a key (`KEY`,
    /// `REKEY`...), double-quoted runs are redacted too: SQLite takes
    /// `KEY "secret"` as a string. With `isSQL` false, every single-quoted run is
    /// redacted whatever surrounds it: how SQLite's own message about a
    /// statement is shown (`near "'<redacted>'": syntax error`).
    static func redactingLiterals(_ bytes: UnsafeBufferPointer<UInt8>, isSQL: Bool = true) -> String {
        let mentionsKey = String(decoding: bytes, as: UTF8.self).uppercased().contains("KEY")
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        func copyQuotedRun() {
            let end = quotedRunEnd(bytes, from: index)
            output.append(contentsOf: bytes[index..<end])
            index = end
        }
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "'"):
                index += 1
                while index < bytes.count {
                    if bytes[index] == UInt8(ascii: "'") {
                        if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "'") { index += 2; continue }
                        break
                    }
                    index += 1
                }
                index += 1
                output.append(contentsOf: "'<redacted>'".utf8)
            case UInt8(ascii: "\"") where mentionsKey:
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") { index += 1 }
                index += 1
                output.append(contentsOf: "\"<redacted>\"".utf8)
            case UInt8(ascii: "\"") where isSQL, UInt8(ascii: "`") where isSQL, UInt8(ascii: "[") where isSQL: copyQuotedRun()
            case _ where isSQL && commentStarts(bytes, at: index):
                let end = skipSpaceAndComments(bytes, from: index)
                output.append(contentsOf: bytes[index..<end])
                index = end
            default:
                output.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `text` with each run of comments (`--` to the line's end, `/* */`)
    /// and the blanks around them turned into one space; strings and
    /// quoted names kept as they are.
    package static func removingComments(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        bytes.withUnsafeBufferPointer { buffer in
            var index = 0
            while index < buffer.count {
                if [UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"), UInt8(ascii: "[")].contains(buffer[index]) {
                    let end = quotedRunEnd(buffer, from: index)
                    output.append(contentsOf: buffer[index..<end])
                    index = end
                } else if commentStarts(buffer, at: index) {
                    output.append(32)
                    index = skipSpaceAndComments(buffer, from: index)
                } else {
                    output.append(buffer[index])
                    index += 1
                }
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// `text` with its literals redacted, as errors quote SQL.
    static func redactingLiterals(in text: String) -> String {
        Array(text.utf8).withUnsafeBufferPointer { redactingLiterals($0) }
    }
}
