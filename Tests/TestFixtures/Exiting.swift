// A test process exits as soon as its last test returns. A queue or pool
// released last on a dispatch thread closes its connection there, and with
// it SQLCipher's cipher contexts; but OpenSSL, once used, frees itself at
// exit (OPENSSL_cleanup, which it registers with atexit when first
// initialized), and the closing thread then crashed the process (SQLCipher
// 4.19, about one run in ten) after its tests had passed. The first
// temporary directory uses OpenSSL through a keyed database, then registers
// a wait until every connection to a file is gone: registered after
// OpenSSL's teardown, it runs before it.
import DBCrypt
import DBCryptCore
import Foundation

enum ProcessExit {
    /// Registers the wait once per process.
    static let waitsForConnections: Void = {
        let path = NSTemporaryDirectory() + "dbcrypt-exit-\(UUID().uuidString).db"
        if let db = try? Database(path: path, key: TestKeys.key) {
            _ = try? db.fetchScalar(Int.self, "SELECT count(*) FROM sqlite_master")
            db.close()
        }
        for suffix in ["", "-journal", "-wal", "-shm"] { unlink(path + suffix) }
        atexit {
            waitUntil(timeout: 5) { OpenFiles.all.isEmpty }
        }
    }()
}
