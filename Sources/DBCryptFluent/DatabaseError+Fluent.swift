#if Fluent
import DBCrypt
import FluentKit

/// DBCrypt's errors as Fluent's, so that an app's handling of a unique-key
/// conflict (`isConstraintFailure`) works unchanged.
extension DBCrypt.DatabaseError: FluentKit.DatabaseError {
    /// SQLite could not compile the statement (`SQLITE_ERROR`, which also
    /// covers a missing table or column, as Fluent's SQLite driver counts it).
    public var isSyntaxError: Bool {
        if case .sqlite = self { return resultCode == 1 || resultCode == 17 } // SQLITE_ERROR, SQLITE_SCHEMA
        return false
    }

    /// A constraint failed: UNIQUE, NOT NULL, CHECK, FOREIGN KEY, PRIMARY KEY (`SQLITE_CONSTRAINT`).
    public var isConstraintFailure: Bool { resultCode == 19 }

    /// The connection is closed or cannot be opened.
    public var isConnectionClosed: Bool {
        switch self {
        case .connectionClosed, .fileNotFound, .cannotOpen, .isDirectory, .permissionDenied: return true
        default: return false
        }
    }
}
#endif
