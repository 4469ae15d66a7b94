import CSQLCipher
import Dispatch

// A write inside a transaction that has already read must upgrade its read
// lock to the write lock. When another connection holds the write lock,
// SQLite refuses at once, whatever the busy timeout: waiting could deadlock
// (each would wait for the other). A BUSY that comes back sooner than the
// busy timeout from such a write is that refusal, not a timeout, and says so.

extension Connection {
    /// When a step that may have to upgrade a read lock began (a write
    /// inside a transaction), to tell SQLite's refusal from a timeout; nil
    /// for every other step, which reads no clock.
    @inline(__always) func upgradeWatchStart(_ statement: OpaquePointer) -> UInt64? {
        guard busyTimeoutMilliseconds > 0, sqlite3_stmt_readonly(statement) == 0,
              let db = sqlite3_db_handle(statement), sqlite3_get_autocommit(db) == 0 else { return nil }
        return DispatchTime.now().uptimeNanoseconds
    }

    /// The error for a failed step of `statement` begun at `watchStart`:
    /// ``DatabaseError/lockUpgradeRefused(sql:)`` for a BUSY that SQLite
    /// returned without waiting out the busy timeout, inside a transaction.
    func stepError(_ code: Int32, of statement: OpaquePointer, sql: String?, watchStart: UInt64?) -> DatabaseError {
        if code == SQLITE_BUSY, let watchStart, let db = sqlite3_db_handle(statement), sqlite3_get_autocommit(db) == 0,
           DispatchTime.now().uptimeNanoseconds - watchStart < UInt64(busyTimeoutMilliseconds) * 1_000_000 {
            return .lockUpgradeRefused(sql: sql)
        }
        return DatabaseError.fromConnection(sqlite3_db_handle(statement), code: code, sql: sql)
    }
}
