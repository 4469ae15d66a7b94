import DBCrypt

/// SQL text split into statements and prepared (never run: a random query
/// may not end): trailing comments, errors quoted in full, literals redacted
/// where keys may be. An error is fine; a trap, or a key literal in an error, is not.
// libFuzzer calls the harness from one thread at a time.
nonisolated(unsafe) private let db = try! Database.inMemory()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSQL(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let sql = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    do {
        let statement = try db.makeStatement(sql)
        _ = statement.columnNames
    } catch let error as DatabaseError {
        let message = error.description
        if sql.uppercased().hasPrefix("ATTACH"), message.contains("fuzzsecret") {
            fatalError("a key literal reached an error: \(message)")
        }
    } catch {
        fatalError("unexpected error \(error)")
    }
    return 0
}
