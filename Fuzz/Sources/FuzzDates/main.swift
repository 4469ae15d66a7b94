import DBCrypt
import Foundation

/// Text read as a date, and the first 8 bytes as a number of seconds written
/// as one: nil or an error for anything bad, never a trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDates(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let text = String(decoding: bytes, as: UTF8.self)
    if let date = Date.fromDatabaseValue(.text(text)) {
        // What was read can be written, unless it lies beyond what is storable.
        _ = try? date.databaseValue
    }
    if count >= 8 {
        let seconds = bytes.loadUnaligned(as: Double.self)
        if case let .text(written)? = try? Date(timeIntervalSince1970: seconds).databaseValue {
            // What is written reads back.
            guard Date.fromDatabaseValue(.text(written)) != nil else { fatalError("\(written) does not read back") }
        }
        _ = Date.fromDatabaseValue(.real(seconds))
        _ = Date.fromDatabaseValue(.integer(bytes.loadUnaligned(as: Int64.self)))
        _ = Int.fromDatabaseValue(.real(seconds))
        _ = Int32.fromDatabaseValue(.integer(bytes.loadUnaligned(as: Int64.self)))
    }
    return 0
}
