#if SQLKit
import DBCrypt
import Logging
import NIOCore
import NIOPosix
import SQLKit

/// A DBCrypt ``DBCrypt/DatabaseQueue`` or ``DBCrypt/DatabasePool`` as an
/// SQLKit `SQLDatabase`: SQLKit's builders, and everything written on them
/// (Fluent among them), on an encrypted database.
///
/// ```swift
/// let pool = try DatabasePool(path: "app.db", key: key)
/// let sql = pool.sql(logger: app.logger)
/// let rows = try await sql.select().column("title").from("note").all()
/// ```
///
/// - A statement runs by itself, committed when it returns. On a pool, a
///   SELECT runs on a reader, at the same time as other reads and as
///   writes, and sees the last commit; every other statement runs on the
///   writer.
/// - ``withSession(_:)`` holds the writer for its closure, across its
///   awaits: every statement of the session runs on that connection, in
///   order (a `BEGIN` ... `COMMIT` written by hand among them), and other
///   tasks' writes wait for it. A session's database used after its
///   closure returned runs its statements as any other.
/// - The SQL text is logged at ``queryLogLevel``. Bound values never are:
///   they are the data the file encrypts.
public struct DBCryptSQLDatabase: SQLDatabase {
    /// The queue or pool the statements run on.
    public let writer: any DatabaseWriter
    /// The writer held for a session, when this is a session's database.
    let session: WriterSession?
    /// Where queries are logged.
    public let logger: Logger
    /// The event loop of the `EventLoopFuture` API.
    public let eventLoop: any EventLoop
    /// The level queries are logged at (their SQL, never their values), or nil for none.
    public let queryLogLevel: Logger.Level?
    /// How bound values become SQLite values.
    public let encoder: SQLValueEncoder
    /// How SQLite values become the types asked for.
    public let decoder: SQLValueDecoder
    /// The linked engine's SQLite, and the SQL it has.
    public let dialect: any SQLDialect = DBCryptSQLiteDialect()
    /// The linked SQLCipher's SQLite version.
    public var version: (any SQLDatabaseReportedVersion)? { SQLiteVersion.linked }

    /// Runs `query` and calls `onRow` with each row, on the database's thread.
    ///
    /// - returns: a future that fails with the ``DBCrypt/DatabaseError`` of
    ///   the statement, or the `EncodingError` of a bound value.
    public func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
    }

    /// Runs `query` and calls `onRow` with each row, on the database's thread.
    ///
    /// - throws: the ``DBCrypt/DatabaseError`` of the statement
    ///   (``DBCrypt/DatabaseError/misuse(reason:)`` from a task that holds
    ///   the writer in another session), or the `EncodingError` of a bound value.
    public func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await execute(sql: query, rowIDColumn: nil, onRow)
    }

    /// Runs `query`, an INSERT, and hands `onRow` one row whose column
    /// `rowIDColumn` is the new row's id (`last_insert_rowid()` on the same
    /// connection): what gives Fluent a new id where the engine has no RETURNING.
    ///
    /// - throws: see ``execute(sql:_:)-(_,_)``.
    package func executeInsert(sql query: any SQLExpression, rowIDColumn: String, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await execute(sql: query, rowIDColumn: rowIDColumn, onRow)
    }

    private func execute(sql query: any SQLExpression, rowIDColumn: String?, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        let (sql, binds) = serialize(query)
        if let queryLogLevel { logger.log(level: queryLogLevel, "Executing query", metadata: ["sql": .string(sql)]) }
        let arguments = StatementArguments(try binds.map { try encoder.encode($0) })
        let decoder = self.decoder
        let run: @Sendable (Database) throws -> Void = { db in
            try Self.run(sql, arguments, on: db, decoder: decoder, onRow)
            if let rowIDColumn {
                onRow(DBCryptSQLRow(columns: .init([rowIDColumn]), values: [.integer(db.lastInsertRowID)], decoder: decoder))
            }
        }
        if let session, try await session.runIfOpen(run) != nil {
            return
        } else if let pool = writer as? DatabasePool, Self.onlyReads(sql) {
            try await pool.unsafeRead(run)
        } else {
            try await writer.writeWithoutTransaction(run)
        }
    }

    /// Runs `closure` with a database whose statements all run on the
    /// writer, held for it across its awaits; inside a session, with this one.
    ///
    /// - throws: ``DBCrypt/DatabaseError/misuse(reason:)`` when the task
    ///   holds the writer already, ``DBCrypt/DatabaseError/connectionClosed``,
    ///   or what `closure` throws.
    public func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        if isInSession { return try await closure(self) }
        return try await writer.withWriterSession { session in try await closure(self.in(session)) }
    }

    /// Whether this database's statements go to a writer held for a session.
    package var isInSession: Bool { session.map { !$0.hasEnded } ?? false }

    /// This database, with its statements sent to `session`.
    package func `in`(_ session: WriterSession?) -> DBCryptSQLDatabase {
        DBCryptSQLDatabase(writer: writer, session: session, logger: logger, eventLoop: eventLoop, queryLogLevel: queryLogLevel,
                           encoder: encoder, decoder: decoder)
    }

    init(writer: any DatabaseWriter, session: WriterSession?, logger: Logger, eventLoop: any EventLoop, queryLogLevel: Logger.Level?,
         encoder: SQLValueEncoder, decoder: SQLValueDecoder) {
        self.writer = writer
        self.session = session
        self.logger = logger
        self.eventLoop = eventLoop
        self.queryLogLevel = queryLogLevel
        self.encoder = encoder
        self.decoder = decoder
    }

    /// Runs one statement on `db` and hands each row to `onRow`.
    static func run(_ sql: String, _ arguments: StatementArguments, on db: Database, decoder: SQLValueDecoder,
                    _ onRow: (any SQLRow) -> Void) throws {
        let cursor = try db.cachedStatement(sql).query(arguments)
        var columns: DBCryptSQLRow.Columns?
        while let row = try cursor.next() {
            let shared = columns ?? DBCryptSQLRow.Columns(cursor.columnNames)
            columns = shared
            onRow(DBCryptSQLRow(columns: shared, values: (0..<row.count).map { row[$0] }, decoder: decoder))
        }
    }

    /// Whether `sql` is a SELECT, which a pool's reader can run. Anything
    /// else (a CTE among them, which may write) goes to the writer.
    static func onlyReads(_ sql: String) -> Bool {
        let start = sql.drop { $0.isWhitespace || $0 == "(" }
        return start.prefix(6).uppercased() == "SELECT"
    }
}

extension DatabaseWriter {
    /// This queue or pool as an SQLKit `SQLDatabase`: see ``DBCryptSQLDatabase``.
    ///
    /// - Parameters:
    ///   - logger: where queries are logged (their SQL, never their values).
    ///   - eventLoop: the event loop of the `EventLoopFuture` API; one of
    ///     SwiftNIO's shared group when nil.
    ///   - queryLogLevel: the level queries are logged at, nil for none.
    ///   - encoder: how bound values are stored (as Fluent's SQLite driver stores them).
    ///   - decoder: how stored values are read back.
    public func sql(
        logger: Logger = Logger(label: "DBCrypt"), on eventLoop: (any EventLoop)? = nil, queryLogLevel: Logger.Level? = .debug,
        encoder: SQLValueEncoder = SQLValueEncoder(), decoder: SQLValueDecoder = SQLValueDecoder()
    ) -> DBCryptSQLDatabase {
        DBCryptSQLDatabase(writer: self, session: nil, logger: logger, eventLoop: eventLoop ?? MultiThreadedEventLoopGroup.singleton.any(),
                           queryLogLevel: queryLogLevel, encoder: encoder, decoder: decoder)
    }
}
#endif
