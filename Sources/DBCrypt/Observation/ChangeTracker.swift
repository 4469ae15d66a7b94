import CSQLCipher
import Foundation

/// What SQLite's hooks tell about one connection: the tables a fetch reads
/// while it is recorded (the authorizer, at prepare time), and the tables
/// each committed transaction changed. An observation re-fetches only after
/// commits that changed a table it read.
///
/// A change is known two ways, because neither sees all: the tables a
/// statement may write, from the authorizer when it is prepared, counted
/// each time it runs (this covers `WITHOUT ROWID` tables, which the update
/// hook never reports, a `DELETE` that empties a table at once, `DROP` and
/// `ALTER`); and the update hook, row by row (this covers rows changed by
/// foreign key actions). The commit and rollback hooks close a transaction.
///
/// Touched only by the thread that uses the connection, like the connection.
final class ChangeTracker {
    /// The tables read by the statements prepared since recording began; nil
    /// when not recording.
    var tablesRead: Set<String>?
    /// Tables changed by the transaction under way.
    private var pending: Set<String> = []
    /// Tables the statement being prepared may write.
    private var preparingWrites: Set<String> = []
    /// Tables changed by transactions committed since the last `takeCommitted`.
    private var committed: Set<String> = []

    /// Installs the hooks on `connection`, which keeps this tracker alive.
    static func install(on connection: Connection) throws -> ChangeTracker {
        let tracker = ChangeTracker()
        let handle = try connection.open()
        connection.changeTracker = tracker
        let context = Unmanaged.passUnretained(tracker).toOpaque()
        sqlite3_set_authorizer(handle, { context, action, first, second, _, _ in
            let tracker = Unmanaged<ChangeTracker>.fromOpaque(context!).takeUnretainedValue()
            return tracker.authorize(action: action, first: first, second: second)
        }, context)
        sqlite3_update_hook(handle, { context, _, _, table, _ in
            guard let table else { return }
            Unmanaged<ChangeTracker>.fromOpaque(context!).takeUnretainedValue().pending.insert(String(cString: table))
        }, context)
        sqlite3_commit_hook(handle, { context in
            let tracker = Unmanaged<ChangeTracker>.fromOpaque(context!).takeUnretainedValue()
            tracker.committed.formUnion(tracker.pending)
            tracker.pending.removeAll()
            return 0   // let the commit go on
        }, context)
        sqlite3_rollback_hook(handle, { context in
            Unmanaged<ChangeTracker>.fromOpaque(context!).takeUnretainedValue().pending.removeAll()
        }, context)
        return tracker
    }

    private func authorize(action: Int32, first: UnsafePointer<CChar>?, second: UnsafePointer<CChar>?) -> Int32 {
        switch action {
        case SQLITE_READ:
            if tablesRead != nil, let first { tablesRead!.insert(String(cString: first)) }
        case SQLITE_INSERT, SQLITE_UPDATE, SQLITE_DELETE, SQLITE_DROP_TABLE, SQLITE_DROP_TEMP_TABLE:
            if let first { preparingWrites.insert(String(cString: first)) }
        case SQLITE_ALTER_TABLE:
            if let second { preparingWrites.insert(String(cString: second)) }
        default:
            break
        }
        return SQLITE_OK
    }

    /// Called before each statement is prepared.
    func willPrepare() {
        preparingWrites.removeAll()
    }

    /// Called once a statement is prepared: the tables it may write, or nil
    /// for a statement that writes none.
    func takeTablesWritten() -> Set<String>? {
        defer { preparingWrites.removeAll() }
        return preparingWrites.isEmpty ? nil : preparingWrites
    }

    /// Called when a statement that may write `tables` runs.
    func statementRuns(writing tables: Set<String>) {
        pending.formUnion(tables)
    }

    /// Adds the tables `statement` reads to ``tablesRead``, from its bytecode:
    /// every table or index it opens for reading (`OpenRead` on a root page).
    /// The authorizer alone misses some reads: SQLite 3.15 reports no
    /// column, and so no table, for `SELECT count(*) FROM t`.
    func recordTablesRead(by statement: OpaquePointer, on db: OpaquePointer) {
        guard tablesRead != nil, let sql = sqlite3_sql(statement) else { return }
        var roots: [(page: Int64, schema: Int64)] = []
        var explain: OpaquePointer?
        guard sqlite3_prepare_v2(db, "EXPLAIN " + String(cString: sql), -1, &explain, nil) == SQLITE_OK, let explain else {
            tablesRead!.insert(Self.everything)
            return
        }
        while sqlite3_step(explain) == SQLITE_ROW {
            guard let opcode = sqlite3_column_text(explain, 1) else { continue }
            let name = String(cString: opcode)
            if name == "OpenRead" || name == "ReopenIdx" {
                roots.append((sqlite3_column_int64(explain, 3), sqlite3_column_int64(explain, 4)))
            }
        }
        sqlite3_finalize(explain)
        for root in roots {
            guard root.schema <= 1, let table = tableName(rootPage: root.page, temp: root.schema == 1, db: db) else {
                tablesRead!.insert(Self.everything)   // an attached database, or a page not found
                continue
            }
            tablesRead!.insert(table)
        }
    }

    /// The table whose data or index lives at `rootPage`; the schema table for page 1.
    private func tableName(rootPage: Int64, temp: Bool, db: OpaquePointer) -> String? {
        if rootPage == 1 { return temp ? "sqlite_temp_master" : "sqlite_master" }
        var query: OpaquePointer?
        let sql = "SELECT tbl_name FROM \(temp ? "sqlite_temp_master" : "main.sqlite_master") WHERE rootpage = ?1"
        guard sqlite3_prepare_v2(db, sql, -1, &query, nil) == SQLITE_OK, let query else { return nil }
        defer { sqlite3_finalize(query) }
        sqlite3_bind_int64(query, 1, rootPage)
        guard sqlite3_step(query) == SQLITE_ROW, let name = sqlite3_column_text(query, 0) else { return nil }
        return String(cString: name)
    }

    /// In ``tablesRead``: a read whose table could not be told, which makes
    /// any commit count.
    static let everything = "*"

    /// The tables changed by the transactions committed since the last call.
    func takeCommitted() -> Set<String> {
        defer { committed.removeAll() }
        return committed
    }
}

extension Database {
    /// Runs `body` and returns what it returned with the tables its
    /// statements read, as SQLite's authorizer reports them while they are
    /// prepared: cached statements are not reused meanwhile, so every
    /// statement is prepared, and seen. An empty set means the tables could
    /// not be told (treat the fetch as reading everything).
    func recordingTablesRead<T>(_ body: (Database) throws -> T) throws -> (T, Set<String>) {
        let tracker = try connection.changeTracker ?? ChangeTracker.install(on: connection)
        tracker.tablesRead = []
        isRecordingTablesRead = true
        defer {
            tracker.tablesRead = nil
            isRecordingTablesRead = false
        }
        let value = try body(self)
        let tables = tracker.tablesRead ?? []
        return (value, tables.contains(ChangeTracker.everything) ? [] : tables)
    }
}
