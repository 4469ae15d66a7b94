// A test process exits as soon as its last test returns. A queue or pool
// released last on a dispatch thread closes its connection there, while
// the engine tears itself down at exit (a handler it registers with atexit
// when first used, on SQLCipher 4.19 and its OpenSSL): the process crashed,
// one run in ten, after its tests had passed. The first temporary directory
// opens a keyed database, so that the engine has registered its teardown,
// then registers a wait until every connection to a file is gone, a second
// at most: registered later, it runs first. (A connection a test leaves
// open for good costs that second: close them in tearDown.)
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
            waitUntil(timeout: 1) { OpenFiles.all.isEmpty }
        }
    }()
}
