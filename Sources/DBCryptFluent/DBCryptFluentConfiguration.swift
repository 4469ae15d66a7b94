#if Fluent
import DBCrypt
import DBCryptSQLKit
import FluentKit
import Logging

extension DatabaseConfigurationFactory {
    /// An encrypted SQLite database at `path`, opened with `key`, as a Fluent
    /// database: in `configure.swift`,
    ///
    /// ```swift
    /// app.databases.use(.dbcrypt(path: "app.db", key: key), as: .dbcrypt)
    /// ```
    ///
    /// The file is opened as a ``DBCrypt/DatabasePool`` (WAL, one writer, up
    /// to `options.maximumReaderCount` readers, the key derived once)
    /// when Fluent first asks for the database; a wrong key or a damaged
    /// file fails that first use, and every later one, with the
    /// ``DBCrypt/DatabaseError`` that names the file
    /// (``DBCrypt/DatabaseError/wrongKeyOrNotADatabase(path:)``), so an app
    /// that migrates at start refuses to start. Values are stored as
    /// Fluent's SQLite driver stores them, so a database it wrote reads the
    /// same once encrypted with `dbcrypt migrate`.
    ///
    /// - Parameters:
    ///   - path: the database file, created when missing.
    ///   - key: its key, for instance from DBCryptKeyStore.
    ///   - options: the cipher settings, the connections' options and the
    ///     pool's reader count (SQLCipher 4's settings by default).
    ///   - sqlLogLevel: the level the SQL of each query is logged at, nil
    ///     for none. Bound values are never logged.
    ///   - encoder: how bound values are stored.
    ///   - decoder: how stored values are read back.
    public static func dbcrypt(
        path: String, key: DatabaseKey, options: DBCrypt.Database.Options = .init(), sqlLogLevel: Logger.Level? = .debug,
        encoder: SQLValueEncoder = .init(), decoder: SQLValueDecoder = .init()
    ) -> Self {
        .init {
            DBCryptFluentConfiguration(
                path: path, key: key, options: options, middleware: [], sqlLogLevel: sqlLogLevel, encoder: encoder, decoder: decoder)
        }
    }

    /// A DBCrypt database with `configuration`'s reader count.
    @available(*, deprecated, message: "set maximumReaderCount in options, and call dbcrypt(path:key:options:sqlLogLevel:encoder:decoder:)")
    public static func dbcrypt(
        path: String, key: DatabaseKey, options: DBCrypt.Database.Options = .init(),
        configuration: DatabasePool.Configuration, sqlLogLevel: Logger.Level? = .debug,
        encoder: SQLValueEncoder = .init(), decoder: SQLValueDecoder = .init()
    ) -> Self {
        var options = options
        options.maximumReaderCount = configuration.maximumReaderCount
        options.continuousBackup = configuration.continuousBackup
        return dbcrypt(path: path, key: key, options: options, sqlLogLevel: sqlLogLevel, encoder: encoder, decoder: decoder)
    }
}

extension DatabaseID {
    /// The usual identifier of a DBCrypt database.
    public static var dbcrypt: DatabaseID { .init(string: "dbcrypt") }
}

/// What ``FluentKit/DatabaseConfigurationFactory/dbcrypt(path:key:options:sqlLogLevel:encoder:decoder:)`` makes.
struct DBCryptFluentConfiguration: DatabaseConfiguration {
    let path: String
    let key: DatabaseKey
    let options: DBCrypt.Database.Options
    var middleware: [any AnyModelMiddleware]
    let sqlLogLevel: Logger.Level?
    let encoder: SQLValueEncoder
    let decoder: SQLValueDecoder

    /// Opens the pool (the first use of the database); a failure is kept
    /// and thrown by every use.
    func makeDriver(for databases: Databases) -> any DatabaseDriver {
        DBCryptFluentDriver(opened: Result {
            let pool = try DatabasePool(path: path, key: key, options: options)
            do {
                // As Fluent's SQLite driver: foreign keys are enforced.
                try pool.writeWithoutTransaction { db in try db.execute("PRAGMA foreign_keys = ON") }
            } catch {
                try? pool.close()
                throw error
            }
            return pool
        }, configuration: self)
    }
}

/// The driver: one pool, shared by every event loop (its readers read at
/// once, its writer serializes writes), closed at shutdown.
final class DBCryptFluentDriver: DatabaseDriver {
    let opened: Result<DatabasePool, any Error>
    let configuration: DBCryptFluentConfiguration

    init(opened: Result<DatabasePool, any Error>, configuration: DBCryptFluentConfiguration) {
        self.opened = opened
        self.configuration = configuration
    }

    /// The database for `context`, whose logger never receives a bound value.
    func makeDatabase(with context: DatabaseContext) -> any FluentKit.Database {
        let logger = context.logger.redactingQueryValues
        let context = DatabaseContext(
            configuration: context.configuration, logger: logger, eventLoop: context.eventLoop, history: context.history,
            pageSizeLimit: context.pageSizeLimit, shouldTrace: context.shouldTrace)
        return FluentDBCryptDatabase(
            sql: opened.map { pool in
                pool.sql(logger: logger, on: context.eventLoop, queryLogLevel: configuration.sqlLogLevel,
                         encoder: configuration.encoder, decoder: configuration.decoder)
            },
            context: context, inTransaction: false)
    }

    /// Closes the pool, which checkpoints the WAL into the file.
    func shutdown() {
        if case .success(let pool) = opened {
            do {
                try pool.close()
            } catch {
                Logger(label: "DBCrypt").error("closing \(pool.path) failed: \(error)")
            }
        }
    }
}
#endif

#if Fluent
extension FluentKit.Database {
    /// The DBCrypt pool under a DBCrypt Fluent database (nil for another
    /// driver's, or when the file could not be opened): for what Fluent does
    /// not do, such as backups, key changes and observation. Writing through
    /// it from inside a Fluent transaction on it is
    /// ``DBCrypt/DatabaseError/misuse(reason:)``: use the transaction's database.
    public var dbcryptPool: DatabasePool? {
        guard let database = self as? FluentDBCryptDatabase, case .success(let sql) = database.sql else { return nil }
        return sql.writer as? DatabasePool
    }
}
#endif
