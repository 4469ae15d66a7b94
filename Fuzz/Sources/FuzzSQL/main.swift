import DBCrypt

/// SQL text split into statements and prepared (never run: a random query
/// may not end): trailing comments, NUL characters, errors quoted in full,
/// literals redacted where keys may be. An error is fine; a trap, or the
/// word `fuzzsecret` from inside a string literal reaching an error, is not.
// libFuzzer calls the harness from one thread at a time.
nonisolated(unsafe) private let db = try! Database.inMemory()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSQL(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let sql = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    do {
        let statement = try db.makeStatement(sql)
        _ = statement.columnNames
    } catch let error as DatabaseError {
        let (inside, outside) = secretOccurrences(in: Array(sql.utf8))
        func count(_ text: String?) -> Int { (text ?? "").components(separatedBy: "fuzzsecret").count - 1 }
        // The quoted SQL and SQLite's message may each show a name written
        // outside quotes, but neither may show more than those.
        let parts: [String?]
        if case let .sqlite(_, message, quoted) = error { parts = [message, quoted] } else { parts = [error.description] }
        if inside > 0 && parts.contains(where: { count($0) > outside }) {
            fatalError("a string literal reached an error: \(error.description)")
        }
    } catch {
        fatalError("unexpected error \(error)")
    }
    return 0
}

/// How often `fuzzsecret` starts inside a single-quoted literal, and
/// elsewhere: an oracle written apart from DBCrypt's own lexer.
private func secretOccurrences(in bytes: [UInt8]) -> (inside: Int, outside: Int) {
    let word = Array("fuzzsecret".utf8)
    var inside = 0, outside = 0
    var state: UInt8 = 0   // 0 code, or the byte that closes what we are in
    var index = 0
    while index < bytes.count {
        let byte = bytes[index]
        if bytes[index...].starts(with: word) {
            if state == UInt8(ascii: "'") { inside += 1 } else { outside += 1 }
        }
        switch state {
        case 0:
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"): state = byte
            case UInt8(ascii: "["): state = UInt8(ascii: "]")
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"): state = 10
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                state = UInt8(ascii: "*"); index += 1
            default: break
            }
        case UInt8(ascii: "*"):
            if byte == UInt8(ascii: "*"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "/") { state = 0; index += 1 }
        case UInt8(ascii: "'"):
            if byte == UInt8(ascii: "'") {
                if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "'") { index += 1 } else { state = 0 }
            }
        default:
            if byte == state { state = 0 }
        }
        index += 1
    }
    return (inside, outside)
}
