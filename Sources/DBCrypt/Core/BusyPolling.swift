import CSQLCipher
import Dispatch
import Glibc

// SQLite's own busy handler (sqlite3_busy_timeout) sleeps longer and longer
// between tries, up to 100 ms. Beside a writer that commits without
// pausing, in rollback-journal mode, a connection waiting for its shared
// lock must land in the short gap between two commits: sleeping 100 ms at a
// time it lands in almost none, and fails after the whole timeout (a
// snapshot backup failed 2 times in 3 so). A connection that must get in
// tries every 100 µs at first, then every millisecond.

/// The state of one connection's polling busy handler.
final class BusyPolling: @unchecked Sendable {
    // @unchecked: used by SQLite on the thread running the connection, one at a time.
    let timeoutNanoseconds: UInt64
    var start: UInt64 = 0

    init(milliseconds: Int32) { timeoutNanoseconds = UInt64(max(0, milliseconds)) * 1_000_000 }
}

extension Connection {
    /// Replaces SQLite's busy handler with one that tries again every
    /// millisecond (at first every 100 µs) until `busyTimeoutMilliseconds` has
    /// passed since the first try, on `handle`, this connection's.
    func pollWhileBusy(_ handle: OpaquePointer) {
        let polling = BusyPolling(milliseconds: busyTimeoutMilliseconds)
        busyPolling = polling
        sqlite3_busy_handler(handle, { context, tries in
            let polling = Unmanaged<BusyPolling>.fromOpaque(context!).takeUnretainedValue()
            let now = DispatchTime.now().uptimeNanoseconds
            if tries == 0 { polling.start = now }
            guard now - polling.start < polling.timeoutNanoseconds else { return 0 }
            usleep(tries < 50 ? 100 : 1000)
            return 1
        }, Unmanaged.passUnretained(polling).toOpaque())
    }
}
