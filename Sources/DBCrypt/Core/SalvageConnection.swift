import Foundation

/// A DBCrypt connection as where a salvage (SQLCipherFormat's
/// `EncryptedDatabaseFile.salvage(into:scratch:)`) writes the database it
/// rebuilds: `file.salvage(into: SalvageConnection(db), scratch: ...)`.
public struct SalvageConnection: SalvageDestination {
    /// The connection written to.
    public let database: Database

    /// Writes through `database`.
    public init(_ database: Database) {
        self.database = database
    }

    /// Runs `sql` with the salvaged values bound to its `?` parameters.
    ///
    /// - throws: ``DatabaseError`` as ``Database/execute(_:_:)`` does.
    public func execute(_ sql: String, _ arguments: [SalvagedValue]) throws {
        try database.execute(sql, StatementArguments(arguments.map { value -> DatabaseValue in
            switch value {
            case .null: .null
            case let .integer(v): .integer(v)
            case let .real(v): .real(v)
            case let .text(v): .text(v)
            case let .blob(v): .blob(Data(v))
            }
        }))
    }

    /// Every row `sql` returns, each as its columns' values.
    ///
    /// - throws: ``DatabaseError`` as ``Database/fetchAll(_:_:)`` does.
    public func rows(_ sql: String) throws -> [[SalvagedValue]] {
        try database.fetchAll(sql).map { row in
            (0..<row.count).map { index -> SalvagedValue in
                switch row[index] as DatabaseValue {
                case .null: .null
                case let .integer(v): .integer(v)
                case let .real(v): .real(v)
                case let .text(v): .text(v)
                case let .blob(v): .blob([UInt8](v))
                }
            }
        }
    }
}
