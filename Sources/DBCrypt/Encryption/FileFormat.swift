#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a file is, from its header alone, without a key.
///
/// ```swift
/// switch try FileFormat.detect(at: path) {
/// case .plaintext: print("not encrypted yet")
/// case .notPlaintext: print("encrypted, or not a database")
/// case .missing, .empty: print("nothing there yet")
/// }
/// ```
public enum FileFormat: Equatable, Sendable {
    /// No file at the path.
    case missing
    /// A file of zero bytes, which SQLite and SQLCipher treat as a new database.
    case empty
    /// A plaintext SQLite database: its header starts `SQLite format 3\0`,
    /// and its first page is laid out as SQLite writes page 1
    /// (`SQLiteHeader.hasPageOneLayout`), which encrypted bytes behind a
    /// plaintext header are not.
    case plaintext(pageSize: Int, userVersion: Int32)
    /// Anything else: an encrypted database (SQLCipher's header is random
    /// salt, or a plaintext header followed by encrypted bytes) or a file
    /// that is not a database. Only a key tells which.
    case notPlaintext

    /// Reads the first 101 bytes of the file at `path` (keeping this
    /// process's locks on it: see `FileReader`).
    ///
    /// - throws: ``DatabaseError/isDirectory(path:)``,
    ///   ``DatabaseError/permissionDenied(path:)``, or
    ///   ``DatabaseError/cannotOpen(path:reason:)`` for other system errors.
    public static func detect(at path: String) throws -> FileFormat {
        try detectWithHeader(at: path).format
    }

    /// ``detect(at:)``, and whether a `.notPlaintext` file starts with
    /// SQLite's magic: encrypted bytes behind a plaintext header.
    static func detectWithHeader(at path: String) throws -> (format: FileFormat, hasPlaintextHeader: Bool) {
        let start: [UInt8]?
        do {
            start = try FileReader.start(of: path, count: 101)
        } catch {
            throw DatabaseError(error)
        }
        guard let header = start else { return (.missing, false) }
        let filled = header.count
        if filled == 0 { return (.empty, false) }
        guard filled >= 16, Array(header[0..<16]) == SQLiteHeader.magic else { return (.notPlaintext, false) }
        if !SQLiteHeader.hasPageOneLayout(header) { return (.notPlaintext, true) }
        let rawPageSize = filled >= 18 ? Int(header[16]) << 8 | Int(header[17]) : 0
        let userVersion = filled >= 64
            ? Int32(bitPattern: UInt32(header[60]) << 24 | UInt32(header[61]) << 16 | UInt32(header[62]) << 8 | UInt32(header[63]))
            : 0
        return (.plaintext(pageSize: rawPageSize == 1 ? 65536 : rawPageSize, userVersion: userVersion), false)
    }
}
