import TestFixtures
import XCTest

/// Temporary storage stays in memory on every engine: a sort bigger than the
/// cache, a temporary table and its index on an encrypted database write no
/// plaintext row to any file. Debian 13's SQLCipher is built to put
/// temporary files on disk, in plaintext, where SQLCipher encrypts only the
/// database and its journals.
final class TemporaryStorageTests: XCTestCase {
    /// Every byte the helper process wrote (write, pwrite64 and the vector
    /// forms, through strace), while it sorts and fills a temporary table.
    private func everyWrite(temporaryStorageOnDisk: Bool) throws -> String {
        let directory = try makeTemporaryDirectory(self)
        let trace = directory.appendingPathComponent("writes.trace").path
        let (status, _, complaint) = try runProgram(
            "/usr/bin/strace",
            ["-f", "-qq", "-e", "trace=write,pwrite64,writev,pwritev,pwritev2", "-s", "1000000", "-o", trace,
             testHelperPath, "temp-storage", directory.appendingPathComponent("notes.db").path]
                + (temporaryStorageOnDisk ? ["--temp-store-file"] : []),
            environment: ["DBCRYPT_TEST_KEY": TestKeys.text(named: "temporary-storage-test"), "SQLITE_TMPDIR": directory.path])
        XCTAssertEqual(status, 0, complaint)
        return try String(decoding: Data(contentsOf: URL(fileURLWithPath: trace)), as: UTF8.self)
    }

    func testNoPlaintextRowIsWrittenBySortsOrTemporaryTables() throws {
        let writes = try everyWrite(temporaryStorageOnDisk: false)
        XCTAssertTrue(writes.contains("pwrite64("), "the trace saw no database write at all")
        XCTAssertFalse(writes.contains("row-secret-"), "a plaintext row reached a file")
    }

    /// The control: the same work with temporary storage on disk, as a raw
    /// handle with Debian 13's default would do it, writes the rows in
    /// plaintext, and the trace sees them.
    func testTheTraceSeesPlaintextRowsWhenTemporaryStorageIsOnDisk() throws {
        XCTAssertTrue(try everyWrite(temporaryStorageOnDisk: true).contains("row-secret-"))
    }
}
