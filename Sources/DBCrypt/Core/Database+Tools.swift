import CSQLCipher
import Foundation
import Synchronization

/// Stops the statement a connection is running, from any thread: what a
/// shell's Ctrl-C does (`sqlite3_interrupt`). Once the connection is closed
/// it does nothing.
package final class DatabaseInterrupter: Sendable {
    /// The connection's handle as an address (a pointer is not Sendable); 0 once closed.
    private let handle: Mutex<Int>

    init(_ handle: OpaquePointer) {
        self.handle = Mutex(Int(bitPattern: UnsafeRawPointer(handle)))
    }

    /// Makes the running statement, if any, fail with `SQLITE_INTERRUPT`.
    package func interrupt() {
        handle.withLock { if let handle = OpaquePointer(bitPattern: $0) { sqlite3_interrupt(handle) } }
    }

    /// Called by the connection before it closes its handle.
    func invalidate() {
        handle.withLock { $0 = 0 }
    }
}

extension Database {
    /// The interrupter of this connection (one per connection).
    package var interrupter: DatabaseInterrupter {
        get throws { try connection.interrupter() }
    }
}

extension Row {
    /// Column `index` of a live row as SQLite's shell reads it: its storage
    /// class (`sqlite3_column_type`), its value as a real, and SQLite's own
    /// text of it (`sqlite3_column_text`: the engine's conversion of a
    /// number, a blob's raw bytes; empty for NULL), read in that order (once
    /// converted to text, a column's type is no longer reported reliably).
    package func sqliteColumn(at index: Int) -> (type: Int32, real: Double, text: [UInt8]) {
        guard let handle else { preconditionFailure("sqliteColumn(at:) reads a live row, from a cursor") }
        let column = Int32(index)
        let type = sqlite3_column_type(handle, column)
        guard type != SQLITE_NULL else { return (type, 0, []) }
        let real = type == SQLITE_FLOAT ? sqlite3_column_double(handle, column) : 0
        guard let text = sqlite3_column_text(handle, column) else { return (type, real, []) }
        return (type, real, Array(UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column)))))
    }
}
