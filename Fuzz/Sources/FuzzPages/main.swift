import Foundation
import SQLCipherFormat

/// Bytes as a SQLCipher file and its `-wal` (the first byte says where the
/// log starts, in 512-byte pages): opened by the page reader with a raw key
/// under SQLCipher 1 settings with 512-byte pages (no HMAC, so every page
/// gets decrypted and parsed, not refused), verified, decrypted and salvaged;
/// then the same bytes read as a plaintext file by the b-tree scanner. A
/// typed error for anything malformed, never a trap, and memory bounded by
/// the input's size.
private let directory: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("dbcrypt-fuzz-pages-\(getpid())")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}()
private let path = directory.appendingPathComponent("input.db").path
private let key = try! DatabaseKey(rawKey: [UInt8](repeating: 0x42, count: 32), salt: [UInt8](repeating: 0x24, count: 16))
private let settings: CipherSettings = {
    var settings = CipherSettings.sqlcipher1
    settings.pageSize = 512
    return settings
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPages(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let split = min(count, 1 + Int(bytes[0]) * 512)
    let database = Data(bytes[1..<split]), log = Data(bytes[split...])
    let output = directory.appendingPathComponent("output.db").path
    guard FileManager.default.createFile(atPath: path, contents: database) else { return 0 }
    if !log.isEmpty { FileManager.default.createFile(atPath: path + "-wal", contents: log) }
    defer { unlink(path); unlink(path + "-wal"); unlink(output) }

    if let file = try? EncryptedDatabaseFile(path: path, key: key, settings: settings) {
        _ = try? file.verify()
        _ = try? file.decrypt(to: output)
        unlink(output)
        if (try? file.recoverPages(to: output)) != nil { scan(output) }
        unlink(output)
        _ = try? file.convertHeader(to: output, plaintextHeaderSize: 32)
    }
    _ = try? EncryptedDatabaseFile(path: path, key: key)   // detection over every standard set
    scan(path)
    return 0
}

/// Every row the scanner can find in `file`, read as plaintext.
private func scan(_ file: String) {
    guard let scanner = try? PageScanner(path: file) else { return }
    let schema = (try? scanner.schema()) ?? []
    for entry in schema { try? scanner.rows(ofTreeAt: entry.rootPage) { _, _ in } }
    try? scanner.orphanRows { _, _, _ in }
}
