import DBCrypt
import Foundation

/// Bytes as a database file: its header detected, then opened with a raw key
/// (no key derivation, so each run is fast) and read. A typed error for
/// anything that is not the database, never a trap.
private let path: String = {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dbcrypt-fuzz-\(getpid())")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory.appendingPathComponent("input.db").path
}()
private let key = try! DatabaseKey(rawKey: [UInt8](repeating: 0x42, count: 32))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFiles(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    guard FileManager.default.createFile(atPath: path, contents: data) else { return 0 }
    defer { unlink(path); unlink(path + "-journal") }
    var options = Database.Options()
    options.readOnly = true
    options.busyTimeout = .zero
    switch try? FileFormat.detect(at: path) {
    case .plaintext?:
        if let db = try? Database(path: path, options: options) {
            _ = try? db.fetchAll("SELECT name, sql FROM sqlite_master")
            _ = try? db.fetchAll(String.self, "PRAGMA quick_check")
        }
    case .notPlaintext?:
        options.cipher = .sqlcipher3   // 1 KiB pages: more pages per input
        if let db = try? Database(path: path, key: key, options: options) {
            _ = try? db.fetchAll("SELECT name, sql FROM sqlite_master")
        }
    default:
        break
    }
    return 0
}
