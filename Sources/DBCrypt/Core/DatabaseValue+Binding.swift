import CSQLCipher
import Foundation

extension DatabaseValue {
    /// Binds the value to parameter `index` (1-based) of a SQLite
    /// `statement`, copying text and bytes, and returns SQLite's result code.
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        switch self {
        case .null:
            return sqlite3_bind_null(statement, index)
        case let .integer(v):
            return sqlite3_bind_int64(statement, index, v)
        case let .real(d):
            return sqlite3_bind_double(statement, index, d)
        case let .text(s):
            return Self.bindText(s, to: statement, at: index)
        case let .blob(data):
            return data.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress, bytes.count > 0 else {
                    return sqlite3_bind_zeroblob(statement, index, 0)
                }
                guard bytes.count <= Int(Int32.max) else { return SQLITE_TOOBIG }
                return sqlite3_bind_blob(statement, index, base, Int32(bytes.count), dbcrypt_transient())
            }
        }
    }

    /// Binds `text` length-counted, so NUL characters inside it survive. An
    /// empty string is bound as "" with a non-null pointer: a null pointer
    /// would bind NULL.
    @usableFromInline static func bindText(_ text: String, to statement: OpaquePointer, at index: Int32) -> Int32 {
        func bind(_ utf8: UnsafeBufferPointer<UInt8>) -> Int32 {
            guard let base = utf8.baseAddress, utf8.count > 0 else {
                return sqlite3_bind_text(statement, index, "", 0, dbcrypt_transient())
            }
            guard utf8.count <= Int(Int32.max) else { return SQLITE_TOOBIG }
            return UnsafeRawPointer(base).withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                sqlite3_bind_text(statement, index, $0, Int32(utf8.count), dbcrypt_transient())
            }
        }
        // A native string lends its bytes as they are (the hot path: no copy,
        // no uniqueness check); a bridged or non-contiguous one is made native.
        if let bound = text.utf8.withContiguousStorageIfAvailable(bind) { return bound }
        var native = text
        return native.withUTF8(bind)
    }
}
