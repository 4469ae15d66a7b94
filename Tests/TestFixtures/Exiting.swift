// A test process exits as soon as its last test returns. A queue or pool
// released last on a dispatch thread (by an observation's block, say) closes
// its connection there, and SQLCipher 4.19 tears its state down as the
// process exits: the process crashed after its tests had passed. The first
// temporary directory registers a wait, run at exit before the engine's own
// teardown (registered earlier, so run later), until every connection to a
// file is gone.
import DBCryptCore
import Foundation

enum ProcessExit {
    /// Registers the wait once per process.
    static let waitsForConnections: Void = {
        atexit {
            waitUntil(timeout: 5) { OpenFiles.all.isEmpty }
        }
    }()
}
