import CPrimitives
import DBCrypt
import Foundation
import SQLCipherFormat

/// W9: the page reader's verify and decrypt throughput on a SQLCipher 4
/// file of `megabytes`, against the crypto floor of this machine measured
/// in the same run: `openssl speed` of AES-256-CBC decryption and of
/// HMAC-SHA512 over 4 KiB buffers, and the same primitives through
/// CPrimitives over the same number of pages. Verifying a page costs one
/// HMAC; decrypting it, an HMAC and a CBC decryption. Peak memory is read
/// before and after verifying, to show it flat in the file's size.
func runPageReaderBenchmark(rounds: Int, megabytes: Int) throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dbcrypt-bench-pages-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("big.db").path
    let key = try DatabaseKey(rawKey: [UInt8](repeating: 7, count: 32))
    let db = try Database(path: path, key: key)
    try db.execute("CREATE TABLE t(b BLOB)")
    try db.inTransaction { db in
        for _ in 0..<(megabytes * 1024 / 4) { try db.execute("INSERT INTO t VALUES (randomblob(4000))") }
    }
    db.close()
    let file = try EncryptedDatabaseFile(path: path, key: try DatabaseKey(rawKey: [UInt8](repeating: 7, count: 32)))
    let pages = file.pageCount
    let bytes = Double(pages * 4096)
    print("W9: page reader, SQLCipher 4 file of \(pages) pages (\(Int(bytes) >> 20) MiB), \(rounds) rounds, medians")

    let (aes, hmac) = opensslSpeed()
    let floorDecrypt = 1 / (1 / aes + 1 / hmac)
    let (primitiveHMAC, primitiveBoth) = primitiveFloor(pages: min(pages, 65536))
    print(String(format: "  openssl speed (4 KiB): AES-256-CBC decrypt %.0f MB/s, HMAC-SHA512 %.0f MB/s; both: %.0f MB/s",
                 aes / 1e6, hmac / 1e6, floorDecrypt / 1e6))
    print(String(format: "  the same through CPrimitives: HMAC %.0f MB/s; HMAC + decrypt %.0f MB/s", primitiveHMAC / 1e6, primitiveBoth / 1e6))

    _ = try file.verify()  // the file in the page cache, as for every round
    let before = peakResidentMegabytes()
    var verify = Samples(), decrypt = Samples()
    for _ in 0..<rounds {
        verify.add(try seconds { _ = try file.verify() })
    }
    let afterVerify = peakResidentMegabytes()
    let output = directory.appendingPathComponent("plain.db").path
    for _ in 0..<rounds {
        unlink(output)
        decrypt.add(try seconds { _ = try file.decrypt(to: output) })
    }
    unlink(output)
    // The same into memory (tmpfs), where writing and fsync cost next to nothing: the reader's own work.
    var inMemory = Samples()
    let memoryOutput = "/dev/shm/dbcrypt-bench-pages-\(getpid()).db"
    if FileManager.default.fileExists(atPath: "/dev/shm") {
        for _ in 0..<rounds {
            unlink(memoryOutput)
            inMemory.add(try seconds { _ = try file.decrypt(to: memoryOutput) })
        }
        unlink(memoryOutput)
    }
    let verifyRate = bytes / verify.median, decryptRate = bytes / decrypt.median, memoryRate = bytes / inMemory.median
    print(String(format: "  verify:  %7.0f MB/s = %.0f%% of the HMAC floor (openssl), %.0f%% of HMAC + decrypt", verifyRate / 1e6,
                 100 * verifyRate / hmac, 100 * verifyRate / floorDecrypt))
    print(String(format: "  decrypt into tmpfs: %7.0f MB/s = %.0f%% of the HMAC + decrypt floor (openssl)",
                 memoryRate / 1e6, 100 * memoryRate / floorDecrypt))
    print(String(format: "  decrypt onto disk:  %7.0f MB/s = %.0f%% of it, writing and fsyncing the copy included",
                 decryptRate / 1e6, 100 * decryptRate / floorDecrypt))
    print(String(format: "  peak RSS: %.0f MiB before verifying, %.0f MiB after %d verifications of %d MiB", before, afterVerify,
                 rounds + 1, Int(bytes) >> 20))
}

/// Bytes per second of AES-256-CBC decryption and of HMAC-SHA512 over 4 KiB,
/// as `openssl speed` prints them (in thousands of bytes per second).
private func opensslSpeed() -> (Double, Double) {
    func rate(_ arguments: [String]) -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["speed", "-bytes", "4096", "-seconds", "2"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return .nan }
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // The last line: "<name>  <rate>k"
        guard let last = text.split(separator: "\n").last, let field = last.split(separator: " ").last,
              let thousands = Double(field.dropLast()) else { return .nan }
        return thousands * 1000
    }
    return (rate(["-evp", "aes-256-cbc", "-decrypt"]), rate(["-hmac", "sha512"]))
}

/// The primitives the reader calls, over `pages` 4 KiB pages in memory:
/// bytes per second of the page HMAC alone, and of HMAC plus CBC decryption.
private func primitiveFloor(pages: Int) -> (Double, Double) {
    let key = [UInt8](repeating: 1, count: 32)
    guard let cipher = dbcrypt_cbc_key_new(key), let hmacKey = dbcrypt_hmac_key_new(Int32(DBCRYPT_SHA512.rawValue), key, 32) else {
        return (.nan, .nan)
    }
    defer {
        dbcrypt_cbc_key_free(cipher)
        dbcrypt_hmac_key_free(hmacKey)
    }
    var page = [UInt8](repeating: 3, count: 4096), out = [UInt8](repeating: 0, count: 4096), mac = [UInt8](repeating: 0, count: 64)
    var number: [UInt8] = [1, 0, 0, 0]
    let hmac = seconds {
        for _ in 0..<pages { dbcrypt_hmac(hmacKey, &page, 4032, &number, 4, &mac) }
    }
    let both = seconds {
        for _ in 0..<pages {
            dbcrypt_hmac(hmacKey, &page, 4032, &number, 4, &mac)
            page.withUnsafeBufferPointer { p in _ = dbcrypt_cbc(cipher, 0, p.baseAddress! + 4016, p.baseAddress!, &out, 4016) }
        }
    }
    let bytes = Double(pages * 4096)
    return (bytes / hmac, bytes / both)
}

/// This process's peak resident set, in MiB.
private func peakResidentMegabytes() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_maxrss) / 1024
}
