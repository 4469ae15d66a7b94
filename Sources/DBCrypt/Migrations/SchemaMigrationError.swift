import Foundation

/// Why a ``SchemaMigrator`` refused to run, or which migration failed.
///
/// Every refusal happens before anything is written: the database is left
/// byte for byte as it was.
public enum SchemaMigrationError: Error, Equatable, CustomStringConvertible {
    /// A `.sql` file in the migrations directory is not named `NNNN_name.sql`.
    case invalidFileName(file: String)
    /// Two migrations have the same number.
    case duplicateNumber(Int, first: String, second: String)
    /// A migration that was applied has changed since (its checksum differs).
    case appliedMigrationChanged(Int, name: String)
    /// A migration that was applied is no longer among the migrations given.
    case appliedMigrationMissing(Int, name: String)
    /// The database was migrated further than the migrations given know: a
    /// newer version of the app wrote it.
    case databaseIsNewer(appliedUpTo: Int, knownUpTo: Int)
    /// The migrations directory cannot be read.
    case unreadableDirectory(path: String, reason: String)
    /// A migration failed and was rolled back; the ones before it stay applied.
    case failed(Int, name: String, error: String)
    /// ``SchemaMigrator/migrate(_:upTo:)-(Database,_)`` was called inside a
    /// transaction, where foreign key enforcement cannot be turned off.
    case insideTransaction

    /// One sentence that names the migration or file and what to do.
    public var description: String {
        switch self {
        case let .invalidFileName(file):
            return "The migration file \(file) is not named NNNN_name.sql: rename it, for example 0007_add_tags.sql."
        case let .duplicateNumber(number, first, second):
            return "Migrations \(first) and \(second) both have number \(number): give one of them the next free number."
        case let .appliedMigrationChanged(number, name):
            return "Migration \(number) (\(name)) was applied and has changed since: restore it and put the change in a new migration."
        case let .appliedMigrationMissing(number, name):
            return "Migration \(number) (\(name)) was applied but is missing: restore its file."
        case let .databaseIsNewer(applied, known):
            return "The database is migrated up to \(applied), past the last migration known here (\(known)): a newer version of the app wrote it."
        case let .unreadableDirectory(path, reason):
            return "Cannot read the migrations directory \(path): \(reason)."
        case let .failed(number, name, error):
            return "Migration \(number) (\(name)) failed and was rolled back: \(error)"
        case .insideTransaction:
            return "Migrations cannot run inside a transaction: call migrate outside inTransaction or write, for example through the queue's writeWithoutTransaction."
        }
    }
}

extension SchemaMigrationError: DBCryptError {
    /// What kind of failure this is: ``DBCryptErrorCategory/storage`` for a
    /// directory that cannot be read, ``DBCryptErrorCategory/unsupported`` for
    /// a database a newer app migrated, ``DBCryptErrorCategory/misuse`` for
    /// the rest (the migrations given, or how they were run).
    public var category: DBCryptErrorCategory {
        switch self {
        case .unreadableDirectory: .storage
        case .databaseIsNewer: .unsupported
        case .invalidFileName, .duplicateNumber, .appliedMigrationChanged, .appliedMigrationMissing, .failed, .insideTransaction: .misuse
        }
    }
}
