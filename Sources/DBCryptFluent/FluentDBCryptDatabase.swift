#if Fluent
import DBCrypt
import DBCryptSQLKit
import FluentKit
import FluentSQL
import Logging
import NIOCore
import SQLKit
import Synchronization

/// The Fluent database of a DBCrypt pool, made by the driver for each
/// request (or each use of `app.db`).
///
/// - A query outside a transaction runs by itself: a read on one of the
///   pool's readers (reads run at once, and see the last commit), anything
///   else on the writer.
/// - A transaction holds the writer from `BEGIN IMMEDIATE` to its commit,
///   across the awaits of its closure: other tasks' writes wait, their reads
///   go on and see the last commit. A thrown error rolls back. Writing
///   through the pool itself from inside the transaction is
///   ``DBCrypt/DatabaseError/misuse(reason:)``, not a deadlock.
/// - Where the engine has no RETURNING (SQLite 3.15.2), a new row's id is
///   `last_insert_rowid()` of the same connection.
struct FluentDBCryptDatabase: FluentKit.Database, SQLDatabase {
    /// The SQLKit database the queries run through, or why the file could not be opened.
    let sql: Result<DBCryptSQLDatabase, any Error>
    let context: DatabaseContext
    let inTransaction: Bool

    // MARK: Fluent's queries

    /// Runs a Fluent query, and hands each output to `onOutput` on the
    /// event loop, where Fluent's query builder expects it.
    func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void) -> EventLoopFuture<Void> {
        let outputs = Outputs()
        return eventLoop.makeFutureWithTask {
            try await self.execute(query: query) { output in outputs.list.withLock { $0.append(output) } }
        }.map {
            for output in outputs.list.withLock({ $0 }) { onOutput(output) }
        }
    }

    /// Runs a Fluent query; a new row's id is its output.
    ///
    /// - throws: the file's opening error, or the ``DBCrypt/DatabaseError`` of the statement.
    func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void) async throws {
        let sql = try self.sql.get()
        let converted = SQLQueryConverter(delegate: ConverterDelegate()).convert(query)
        let onRow: @Sendable (any SQLRow) -> Void = { onOutput(SQLRowOutput(row: $0, schema: nil)) }
        guard case .create = query.action, query.customIDKey != .some(.string("")) else {
            return try await sql.execute(sql: converted, onRow)
        }
        let idKey = (query.customIDKey ?? .id).description
        if sql.dialect.supportsReturning {
            try await sql.execute(sql: SQLKit.SQLList([converted, SQLReturning(SQLColumn(idKey))], separator: SQLRaw(" ")), onRow)
        } else {
            try await sql.executeInsert(sql: converted, rowIDColumn: idKey, onRow)
        }
    }

    /// Runs a schema change. SQLite's ALTER TABLE only adds columns (and,
    /// from 3.35, drops them): other changes fail with one sentence.
    func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask {
            let sql = try self.sql.get()
            var schema = schema
            if schema.action == .update {
                // Enums are text: changing an enum's cases changes nothing in SQLite.
                schema.updateFields = schema.updateFields.filter {
                    if case .dataType(_, .enum) = $0 { return false }
                    return true
                }
                guard schema.createConstraints.isEmpty, schema.updateFields.isEmpty, schema.deleteConstraints.isEmpty else {
                    throw UnsupportedSchemaChange(reason: "SQLite's ALTER TABLE only adds columns (and drops them, from SQLite 3.35)")
                }
                guard schema.deleteFields.isEmpty || (sql.dialect as? DBCryptSQLiteDialect)?.supportsDropColumn == true else {
                    throw UnsupportedSchemaChange(
                        reason: "the linked SQLCipher's SQLite \(SQLiteVersion.linked.stringValue) cannot drop a column (SQLite has DROP COLUMN from 3.35)")
                }
                if schema.createFields.isEmpty, schema.deleteFields.isEmpty { return }
            }
            try await sql.execute(sql: SQLSchemaConverter(delegate: ConverterDelegate()).convert(schema)) { _ in }
        }
    }

    /// Enums are text in SQLite: nothing to do.
    func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> {
        eventLoop.makeSucceededVoidFuture()
    }

    // MARK: Transactions and connections

    func transaction<T>(_ closure: @escaping @Sendable (any FluentKit.Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        guard !inTransaction else { return closure(self) }
        let promise = eventLoop.makePromise(of: T.self)
        let future = promise.futureResult
        promise.completeWithTask { [self] in
            try await withHeldWriter(transaction: true) { db in try await closure(db).get() }
        }
        return future
    }

    /// Runs `closure` in an IMMEDIATE transaction that holds the writer
    /// across its awaits: committed when it returns, rolled back when it
    /// throws or the task is cancelled. Inside a transaction, runs it in that one.
    ///
    /// - throws: what `closure` throws, `CancellationError`, the
    ///   ``DBCrypt/DatabaseError`` of BEGIN or COMMIT, or
    ///   ``DBCrypt/DatabaseError/misuse(reason:)`` when the task holds the writer already.
    func transaction<T: Sendable>(_ closure: @escaping @Sendable (any FluentKit.Database) async throws -> T) async throws -> T {
        guard !inTransaction else { return try await closure(self) }
        return try await withHeldWriter(transaction: true, closure)
    }

    func withConnection<T>(_ closure: @escaping @Sendable (any FluentKit.Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        guard !isOnHeldWriter else { return closure(self) }
        let promise = eventLoop.makePromise(of: T.self)
        let future = promise.futureResult
        promise.completeWithTask { [self] in
            try await withHeldWriter(transaction: false) { db in try await closure(db).get() }
        }
        return future
    }

    /// Whether this database's statements go to a writer held for it.
    private var isOnHeldWriter: Bool { inTransaction || (try? sql.get().isInSession) == true }

    /// Runs `closure` with this database on the writer, held for it; in an
    /// IMMEDIATE transaction when `transaction` is true.
    private func withHeldWriter<T>(transaction: Bool, _ closure: @escaping @Sendable (any FluentKit.Database) async throws -> T) async throws -> T {
        let sql = try self.sql.get()
        return try await sql.writer.withWriterSession { session in
            let held = FluentDBCryptDatabase(sql: .success(sql.in(session)), context: context, inTransaction: transaction)
            return transaction ? try await session.transaction { try await closure(held) } : try await closure(held)
        }
    }

    // MARK: SQLKit

    var logger: Logger { context.logger }
    var eventLoop: any EventLoop { context.eventLoop }
    var dialect: any SQLDialect { (try? sql.get().dialect) ?? DBCryptSQLiteDialect() }
    var version: (any SQLDatabaseReportedVersion)? { SQLiteVersion.linked }
    var queryLogLevel: Logger.Level? { (try? sql.get())?.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await self.sql.get().execute(sql: query, onRow) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await sql.get().execute(sql: query, onRow)
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await sql.get().withSession(closure)
    }
}

/// SQLite's column types for Fluent's data types, as Fluent's SQLite driver
/// writes them (a date is a REAL of seconds since 1970).
private struct ConverterDelegate: SQLConverterDelegate {
    func customDataType(_ dataType: DatabaseSchema.DataType) -> (any SQLExpression)? {
        switch dataType {
        case .string, .enum: return SQLRaw("TEXT")
        case .datetime: return SQLRaw("REAL")
        case .int64: return SQLRaw("INTEGER")
        default: return nil
        }
    }
}

/// A query's outputs, gathered on the database's thread for the event loop.
private final class Outputs: Sendable {
    let list = Mutex<[any DatabaseOutput]>([])
}

/// A schema change SQLite cannot make.
struct UnsupportedSchemaChange: Error, CustomStringConvertible {
    let reason: String
    var description: String { "This schema change cannot be made: \(reason)." }
}
#endif
