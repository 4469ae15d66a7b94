import CSQLCipher
import Foundation

/// Every error DBCrypt throws.
///
/// Each case carries what a user needs to act on it, and never a key, a
/// passphrase or a statement's arguments. Errors reported by SQLite itself are
/// ``sqlite(code:message:sql:)``, with the extended result code, SQLite's
/// message and the SQL text (not its arguments, and with its literals
/// redacted: they may hold keys or private values). ``resultCode`` gives every
/// case's SQLite primary result code, for callers that switch on codes.
///
/// ```swift
/// do {
///     let db = try Database(path: path, key: key)
/// } catch DatabaseError.wrongKeyOrNotADatabase {
///     print("wrong key")
/// }
/// ```
public enum DatabaseError: Error, Equatable, CustomStringConvertible {
    // MARK: - Opening

    /// The key does not decrypt the file, or the file is not a database
    /// (SQLITE_NOTADB, code 26). Raised at open.
    case wrongKeyOrNotADatabase(path: String)
    /// A key was given for a file whose header is plaintext SQLite, or a
    /// key change was asked of a database that is not encrypted (which
    /// SQLCipher would leave plaintext).
    case notEncrypted(path: String)
    /// No key was given for a file that is encrypted (or is not a database).
    case keyRequired(path: String)
    /// The file does not exist and the options say not to create it.
    case fileNotFound(path: String)
    /// The path names a directory.
    case isDirectory(path: String)
    /// The process may not read (or, to create, write) the file.
    case permissionDenied(path: String)
    /// The file could not be opened for another reason, given by the system.
    case cannotOpen(path: String, reason: String)
    /// The linked SQLite library is not SQLCipher: it cannot encrypt.
    case notSQLCipher(sqliteVersion: String)
    /// The linked SQLCipher does not support a cipher setting that was asked for.
    case unsupportedCipherSetting(name: String, cipherVersion: String)

    // MARK: - Encryption routines

    /// The destination of a routine exists, and replacing it was not asked for.
    case destinationExists(path: String)
    /// The source of `encrypt` or `migrateInPlace` is not a plaintext SQLite
    /// database: it is encrypted already, or not a database.
    case sourceNotPlaintext(path: String)
    /// Another connection holds a lock on the database for longer than the
    /// busy timeout: it cannot be opened (another process keeps it
    /// exclusively, or is writing to it), or exported safely.
    case databaseInUse(path: String)
    /// The destination's file system has less free space than the routine needs.
    case insufficientSpace(path: String, needed: Int64, available: Int64)
    /// The file system filled up (or a file-size limit was hit) while writing.
    case diskFull(path: String)
    /// The routine was cancelled; nothing was changed.
    case cancelled
    /// The new database did not match the source when checked, so it was
    /// discarded and nothing was changed.
    case verificationFailed(path: String, reason: String)
    /// The output of a routine is its input: the same path, a link to it, or
    /// the same file by another name. Refused whatever the options say.
    case destinationIsSource(path: String)
    /// An in-place routine was asked to replace a file that has other names
    /// (hard links), which would keep the old content.
    case hardLinked(path: String, links: Int)
    /// The new copy of a file replaced in place could not be given the
    /// file's owner and group, so the file was left as it was.
    case ownershipNotKept(path: String)
    /// A source without write access has a write-ahead log that may hold
    /// changes not yet in the file, and reading them needs write access.
    case uncheckpointedReadOnlySource(path: String)
    /// A file-size limit (`ulimit -f`) stopped the routine while it wrote.
    /// Only in a process that ignores SIGXFSZ (`dbcrypt` does); otherwise the
    /// signal ends the process, and the next run removes its temporary file.
    case fileSizeLimit(path: String)
    /// A read-only connection met a transaction that a stopped process left
    /// unfinished (a hot `-journal`, or a `-wal` that needs recovery): only a
    /// connection with write access can roll it back, which any read-write
    /// open does by itself.
    case unfinishedTransaction(path: String)
    /// SQLite found the file malformed: truncated, overwritten, or a header
    /// that is not valid. `reason` says what SQLite saw.
    case damaged(path: String, reason: String)
    /// The `-wal` beside the database holds committed transactions that
    /// SQLite would not read (a damaged frame, or a damaged log header): it
    /// was left as it is. ``Database/Options/acceptsDamagedWriteAheadLog``
    /// opens the database without them.
    case damagedWriteAheadLog(path: String, reason: String)
    /// The key opens the database file alone, but the frames of the `-wal`
    /// beside it do not decrypt with it: the log belongs to another database
    /// (copied or restored beside it) or is damaged. It was left as it is.
    case writeAheadLogDoesNotDecrypt(path: String)

    // MARK: - Using a connection

    /// The connection was closed.
    case connectionClosed
    /// A ``DatabaseQueue`` or ``DatabasePool`` was called from inside one of
    /// its own closures, where waiting for itself would never end.
    case reentrantQueueAccess
    /// DBCrypt was asked for something its API does not allow: the reason
    /// says what, and what to call instead.
    case misuse(reason: String)
    /// A row has no column of that name.
    case columnNotFound(name: String, sql: String?)
    /// A column's value cannot be converted to the type asked for (NULL into
    /// a non-optional type, text into a number, ...).
    case typeMismatch(column: String, value: String, type: String, sql: String?)
    /// The statement's arguments do not match its parameters, or one of them
    /// cannot be stored (a `Date` that is not finite, ...).
    case invalidArguments(reason: String, sql: String?)
    /// A row does not decode as the `Decodable` type asked for, though each
    /// column's storage class fits: an enum without that raw value, a
    /// failing check in a custom `init(from:)`, ... `column` is the column
    /// being decoded when the decoder knows it.
    case decodingFailed(column: String?, type: String, sql: String?)
    /// A record has no value for a column of its table's primary key (the
    /// property is missing, or nil where the row must be found by it).
    case missingPrimaryKey(table: String, column: String, sql: String?)
    /// A record's update found no row with its primary key: the row was
    /// deleted, or the record was never inserted.
    case recordNotFound(table: String, sql: String?)
    /// A record does not encode as columns: it must encode as a keyed
    /// container (a struct or class of properties), whose values are column
    /// values or nested values, which are stored as JSON text.
    case recordEncodingFailed(table: String, column: String?, reason: String)

    /// A transaction that had read tried to write while another connection
    /// held the write lock (SQLITE_BUSY). SQLite refuses such an upgrade at
    /// once, whatever the busy timeout, since waiting could deadlock: roll
    /// back and retry, or begin the transaction IMMEDIATE, which waits for
    /// the write lock before it reads.
    case lockUpgradeRefused(sql: String?)

    // MARK: - SQLite

    /// SQLite reported an error: its extended result code, its message, and
    /// the SQL text that failed (never its arguments).
    case sqlite(code: Int32, message: String, sql: String?)

    /// SQLite's primary result code for this error (`SQLITE_ERROR` = 1 for
    /// errors DBCrypt detects itself, `SQLITE_NOTADB` = 26 for a wrong key).
    public var resultCode: Int32 {
        switch self {
        case .wrongKeyOrNotADatabase, .keyRequired: return SQLITE_NOTADB
        case .fileNotFound, .isDirectory, .cannotOpen: return SQLITE_CANTOPEN
        case .databaseInUse, .lockUpgradeRefused: return SQLITE_BUSY
        case .diskFull, .insufficientSpace, .fileSizeLimit: return SQLITE_FULL
        case .hardLinked, .destinationIsSource: return SQLITE_MISUSE
        case .ownershipNotKept: return SQLITE_PERM
        case .uncheckpointedReadOnlySource, .unfinishedTransaction: return SQLITE_READONLY
        case .cancelled: return SQLITE_INTERRUPT
        case .verificationFailed, .damaged, .damagedWriteAheadLog, .writeAheadLogDoesNotDecrypt: return SQLITE_CORRUPT
        case .permissionDenied: return SQLITE_PERM
        case .connectionClosed: return SQLITE_MISUSE
        case .reentrantQueueAccess, .misuse: return SQLITE_MISUSE
        case .invalidArguments: return SQLITE_RANGE
        case .typeMismatch, .decodingFailed, .recordEncodingFailed: return SQLITE_MISMATCH
        case .missingPrimaryKey: return SQLITE_MISUSE
        case .recordNotFound: return SQLITE_NOTFOUND
        case let .sqlite(code, _, _): return code & 0xFF
        default: return SQLITE_ERROR
        }
    }

    /// SQLite's extended result code when SQLite reported the error (for
    /// example `SQLITE_CONSTRAINT_UNIQUE`, 2067), else ``resultCode``.
    public var extendedResultCode: Int32 {
        if case let .sqlite(code, _, _) = self { return code }
        return resultCode
    }

    /// One sentence that says what went wrong and what to do next.
    public var description: String {
        switch self {
        case let .wrongKeyOrNotADatabase(path):
            return "The key does not open \(path), or it is not a database: check the key and the file."
        case let .notEncrypted(path):
            return "The database at \(path) is not encrypted: open it without a key, or migrate it to an encrypted database first."
        case let .keyRequired(path):
            return "The file at \(path) is encrypted or is not a database: open it with its key."
        case let .fileNotFound(path):
            return "No database at \(path): check the path, or allow creating it."
        case let .isDirectory(path):
            return "\(path) is a directory, not a database file."
        case let .permissionDenied(path):
            return "Permission denied for \(path): check the file's owner and mode."
        case let .cannotOpen(path, reason):
            return "Cannot open \(path): \(reason)."
        case let .notSQLCipher(version):
            return "The linked SQLite \(version) is not SQLCipher and cannot encrypt: link libsqlcipher (apt-get install libsqlcipher-dev)."
        case let .unsupportedCipherSetting(name, version):
            return "The linked SQLCipher \(version) does not support the cipher setting \(name)."
        case let .destinationExists(path):
            return "\(path) already exists: choose another destination, or ask to replace it."
        case let .sourceNotPlaintext(path):
            return "\(path) is not a plaintext SQLite database (it is encrypted already, or not a database): there is nothing to encrypt."
        case let .databaseInUse(path):
            return "Another connection is using \(path): close it and try again."
        case let .insufficientSpace(path, needed, available):
            return "Not enough free space beside \(path): the new database needs about \(needed) bytes and \(available) are free."
        case let .diskFull(path):
            return "The disk filled up while writing beside \(path): nothing was changed; free some space and try again."
        case .cancelled:
            return "The operation was cancelled: nothing was changed."
        case let .verificationFailed(path, reason):
            return "The new copy of \(path) did not match it (\(reason)), so it was discarded and nothing was changed."
        case let .destinationIsSource(path):
            return "The output \(path) is the input database itself (the same file, by this or another name): choose another output."
        case let .hardLinked(path, links):
            return "\(path) has \(links - 1) other name(s) (hard links), which would keep its old content after the change: remove them, or force the change to accept that."
        case let .ownershipNotKept(path):
            return "The new copy of \(path) cannot be given the file's owner and group, so nothing was changed: run this as the file's owner or as root."
        case let .uncheckpointedReadOnlySource(path):
            return "\(path) has a write-ahead log (\(CompanionFile.wal.path(of: path))) that may hold changes not yet in the file, and reading them needs write access: close the apps using it (or open it once with write access) so the log is folded in, then try again."
        case let .fileSizeLimit(path):
            return "A file-size limit (ulimit -f) stopped writing beside \(path): nothing was changed; raise the limit and try again."
        case let .damaged(path, reason):
            return "\(path) is damaged (\(reason)): restore it from a backup."
        case let .damagedWriteAheadLog(path, reason):
            return "The write-ahead log \(CompanionFile.wal.path(of: path)) is damaged: \(reason). Nothing was changed: restore it from a backup, or open the database accepting the loss."
        case let .writeAheadLogDoesNotDecrypt(path):
            return "The write-ahead log \(CompanionFile.wal.path(of: path)) does not decrypt with the key that opens \(path): it belongs to another database, or is damaged. Nothing was changed: move it away (the database then opens as it was before that log), or put the right log beside it."
        case let .unfinishedTransaction(path):
            return "\(path) has a transaction that a stopped process left unfinished (in \(CompanionFile.journal.path(of: path)) or -wal), and only a connection with write access can roll it back: open it once with write access, then try again."
        case .connectionClosed:
            return "The database connection is closed."
        case .reentrantQueueAccess:
            return "A DatabaseQueue or DatabasePool was called from inside one of its own closures, where it would wait for itself: use the Database the closure was given."
        case let .misuse(reason):
            return "DBCrypt cannot do this: \(reason)."
        case let .columnNotFound(name, sql):
            return "No column named \(name) in the row" + Self.suffix(sql)
        case let .typeMismatch(column, value, type, sql):
            return "Column \(column) holds \(value), which is not a \(type)" + Self.suffix(sql)
        case let .decodingFailed(column?, type, sql):
            return "Column \(column) holds a value that does not decode as part of \(type)" + Self.suffix(sql)
        case let .decodingFailed(nil, type, sql):
            return "A row does not decode as \(type)" + Self.suffix(sql)
        case let .invalidArguments(reason, sql):
            return "Invalid statement arguments: \(reason)" + Self.suffix(sql)
        case let .missingPrimaryKey(table, column, sql):
            return "The record has no value for \(table).\(column), which its primary key needs: give it one, or check the type's databasePrimaryKey" + Self.suffix(sql)
        case let .recordNotFound(table, sql):
            return "No row of \(table) has the record's primary key (it was deleted, or never inserted): insert it, or use upsert" + Self.suffix(sql)
        case let .recordEncodingFailed(table, column?, reason):
            return "Column \(column) of \(table) cannot be written from the record: \(reason)."
        case let .recordEncodingFailed(table, nil, reason):
            return "The record cannot be written to \(table): \(reason)."
        case let .lockUpgradeRefused(sql):
            return "The transaction read, then could not wait for the write lock that another connection holds (waiting could deadlock,"
                + " so SQLite refuses at once, whatever the busy timeout): roll back and retry it, or begin it with"
                + " BEGIN IMMEDIATE (inTransaction(.immediate)), which waits for the write lock before it reads" + Self.suffix(sql)
        case let .sqlite(code, message, sql) where code == Self.busySnapshot:
            return "SQLite error \(code): \(message): another connection committed after this transaction began reading,"
                + " and a transaction that read an older state may not write; roll back and retry it, or begin it with"
                + " BEGIN IMMEDIATE (inTransaction(.immediate)), which waits for the write lock instead" + Self.suffix(sql)
        case let .sqlite(code, message, sql) where code & 0xFF == SQLITE_BUSY:
            return "SQLite error \(code): \(message): another connection held the lock past the busy timeout;"
                + " retry, or give a longer busyTimeout" + Self.suffix(sql)
        case let .sqlite(code, message, sql):
            return "SQLite error \(code): \(message)" + Self.suffix(sql)
        }
    }

    /// SQLITE_BUSY_SNAPSHOT, which the C macros do not bring to Swift: a
    /// deferred transaction that read, then tried to write after another
    /// connection committed (WAL mode). Waiting cannot help, so SQLite fails
    /// it at once, whatever the busy timeout.
    static let busySnapshot = SQLITE_BUSY | (2 << 8)

    private static func suffix(_ sql: String?) -> String {
        guard let sql else { return "." }
        return " (in `\(sql)`)."
    }
}

extension DatabaseError {
    /// This error with `sql` as its statement, when it is an argument error
    /// raised before the statement was known.
    @usableFromInline func inStatement(_ sql: String) -> DatabaseError {
        if case let .invalidArguments(reason, nil) = self { return .invalidArguments(reason: reason, sql: sql) }
        return self
    }

    /// The error SQLite reports on `connection` for the result code `code`.
    /// Single-quoted text in SQLite's message is redacted, like the
    /// literals of the SQL: it quotes tokens, which may be a key
    /// (`near "'<redacted>'": syntax error`).
    static func fromConnection(_ connection: OpaquePointer?, code: Int32, sql: String?) -> DatabaseError {
        if let connection { DamagedConnections.shared.note(connection, code: code) }
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        let redacted = Array(message.utf8).withUnsafeBufferPointer { SQLText.redactingLiterals($0, isSQL: false) }
        return .sqlite(code: code, message: redacted, sql: sql)
    }
}

extension DatabaseError: DBCryptError {
    /// What kind of failure this is: ``DBCryptErrorCategory/wrongKey`` for
    /// a key that does not open the file (or none given for an encrypted
    /// one), ``DBCryptErrorCategory/damaged`` for a file, page or log that
    /// is not as written (SQLite's `SQLITE_CORRUPT`, or `SQLITE_NOTADB` on a
    /// page after the first), and so on for each case.
    public var category: DBCryptErrorCategory {
        switch self {
        case .wrongKeyOrNotADatabase, .keyRequired: .wrongKey
        case .damaged, .damagedWriteAheadLog, .writeAheadLogDoesNotDecrypt: .damaged
        case .fileNotFound, .recordNotFound: .notFound
        case .destinationExists: .exists
        case .cancelled: .cancelled
        case .permissionDenied, .cannotOpen, .databaseInUse, .insufficientSpace, .diskFull, .verificationFailed, .ownershipNotKept,
             .uncheckpointedReadOnlySource, .fileSizeLimit, .unfinishedTransaction, .lockUpgradeRefused: .storage
        case .notSQLCipher, .unsupportedCipherSetting: .unsupported
        case .notEncrypted, .isDirectory, .sourceNotPlaintext, .destinationIsSource, .hardLinked, .connectionClosed,
             .reentrantQueueAccess, .misuse, .columnNotFound, .typeMismatch, .invalidArguments, .decodingFailed, .missingPrimaryKey,
             .recordEncodingFailed: .misuse
        case .sqlite:
            switch resultCode {
            case SQLITE_CORRUPT, SQLITE_NOTADB: .damaged
            case SQLITE_INTERRUPT: .cancelled
            case SQLITE_NOTFOUND: .notFound
            case SQLITE_ERROR, SQLITE_CONSTRAINT, SQLITE_MISMATCH, SQLITE_MISUSE, SQLITE_RANGE, SQLITE_TOOBIG, SQLITE_SCHEMA: .misuse
            default: .storage
            }
        }
    }
}

extension DatabaseError {
    /// A file that could not be opened, read or written, in DBCrypt's terms.
    init(_ error: FileError) {
        switch error {
        case let .notFound(path): self = .fileNotFound(path: path)
        case let .isDirectory(path): self = .isDirectory(path: path)
        case let .permissionDenied(path): self = .permissionDenied(path: path)
        case let .notRegularFile(path, _):
            self = .cannotOpen(path: path, reason: "\(error.reason), and is never read or replaced as a database: give a file's path")
        case let .readOnlyFileSystem(path):
            self = .cannotOpen(path: path, reason: "it is on a read-only file system: write elsewhere, or mount it writable")
        case let .noSpace(path): self = .diskFull(path: path)
        case let .fileSizeLimit(path): self = .fileSizeLimit(path: path)
        case let .exists(path): self = .destinationExists(path: path)
        case let .ownershipNotKept(path): self = .ownershipNotKept(path: path)
        case let .tooLarge(path, _), let .system(path, _): self = .cannotOpen(path: path, reason: error.reason)
        }
    }
}

extension DatabaseError {
    /// `body`'s result, with a file it could not open, read or write
    /// (through the core) thrown in DBCrypt's terms.
    static func translating<T>(_ body: () throws(FileError) -> T) throws(DatabaseError) -> T {
        do {
            return try body()
        } catch {
            throw DatabaseError(error)
        }
    }

    /// The same, the error naming `path` (the file the user named, not the
    /// sibling written for it).
    static func translating<T>(naming path: String, _ body: () throws(FileError) -> T) throws(DatabaseError) -> T {
        do {
            return try body()
        } catch {
            throw DatabaseError(error.naming(path))
        }
    }
}

extension DatabaseError {
    /// Why SQLite refused a write for lack of write access.
    public enum WriteRefusal: Sendable, Hashable {
        /// The database file may only be read (`SQLITE_READONLY`).
        case readOnlyFile
        /// No journal can be made beside the file: its directory may not be
        /// written (`SQLITE_READONLY_DIRECTORY`, or `SQLITE_CANTOPEN` on
        /// SQLite before 3.22).
        case noJournalInDirectory
    }

    /// For a write SQLite refused because this user may not write the file
    /// or its directory, which; nil for every other error.
    public var writeRefusal: WriteRefusal? {
        guard case let .sqlite(code, _, _) = self else { return nil }
        // SQLITE_READONLY_DIRECTORY: SQLite 3.22 and later's answer when it
        // cannot make a journal in the directory (3.15 answers SQLITE_CANTOPEN).
        let readOnlyDirectory = SQLITE_READONLY | (6 << 8)
        if code == readOnlyDirectory || code & 0xFF == SQLITE_CANTOPEN { return .noJournalInDirectory }
        return code & 0xFF == SQLITE_READONLY ? .readOnlyFile : nil
    }
}

