import DBCrypt

/// Key text as a key file or variable may hold it: a raw key `x'<hex>'` is
/// parsed or refused with a typed error; nothing traps, nothing prints a key.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeys(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    let text = String(decoding: bytes, as: UTF8.self)
    do {
        let key = try DatabaseKey(sqlcipherRawKey: text)
        guard key.kind != .passphrase, "\(key)" == "<redacted>" else { fatalError("a raw key parsed as something else") }
    } catch let error as CipherError {
        guard case .invalidKey = error else { fatalError("unexpected error \(error)") }
    } catch {
        fatalError("unexpected error \(error)")
    }
    if bytes.count >= 32 {
        _ = try? DatabaseKey(rawKey: bytes.prefix(32), salt: bytes.count >= 48 ? Array(bytes[32..<48]) : Array(bytes.dropFirst(32)))
    }
    _ = DatabaseKey.passphrase(bytes: bytes).isEmpty
    return 0
}
