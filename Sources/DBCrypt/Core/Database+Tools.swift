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
    /// Column `index` of a live row as SQLite writes it as text
    /// (`sqlite3_column_text`: the engine's own conversion of a real, a
    /// blob's raw bytes), or nil for NULL: how SQLite's shell prints a value.
    package func sqliteText(at index: Int) -> [UInt8]? {
        guard let handle else {
            switch self[index] {
            case .null: return nil
            case let .integer(v): return Array(String(v).utf8)
            case let .real(d): return Array(String(d).utf8)
            case let .text(s): return Array(s.utf8)
            case let .blob(b): return Array(b)
            }
        }
        let column = Int32(index)
        guard sqlite3_column_type(handle, column) != SQLITE_NULL, let text = sqlite3_column_text(handle, column) else { return nil }
        return Array(UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))))
    }
}
