import CSQLCipher
import Foundation

extension Database {
    /// Adds a SQL function written in Swift to this connection, or replaces
    /// the one of the same name and argument count.
    ///
    /// ```swift
    /// try db.createFunction("reverse", argumentCount: 1, deterministic: true) { arguments in
    ///     guard case let .text(text) = arguments[0] else { return nil }   // NULL in, NULL out
    ///     return String(text.reversed())
    /// }
    /// let reversed = try db.fetchScalar(String.self, "SELECT reverse('abc')")   // "cba"
    /// ```
    ///
    /// The function runs on the thread that steps the statement, with the
    /// connection in use: it must not use the connection itself. An error it
    /// throws fails the statement with `SQLITE_ERROR` and the error's
    /// description as SQLite's message.
    ///
    /// - parameter name: the function's SQL name (at most 255 bytes of UTF-8).
    /// - parameter argumentCount: the number of arguments (0 to 127), or nil
    ///   for any number.
    /// - parameter deterministic: whether the result depends only on the
    ///   arguments, which lets SQLite use it in indexes and evaluate it once.
    /// - parameter body: the function: arguments in, result out (nil is NULL).
    /// - throws: ``DatabaseError/misuse(reason:)`` for a bad name
    ///   or count, or the ``DatabaseError`` SQLite reports (a function cannot be
    ///   replaced while a statement that uses it runs).
    public func createFunction(
        _ name: String, argumentCount: Int? = nil, deterministic: Bool = false,
        _ body: @escaping ([DatabaseValue]) throws -> (any DatabaseValueConvertible)?
    ) throws {
        let db = try connection.open()
        let count = try Self.checkFunction(name, argumentCount)
        let flags = SQLITE_UTF8 | (deterministic ? SQLITE_DETERMINISTIC : 0)
        let box = Unmanaged.passRetained(FunctionBox(body)).toOpaque()
        // SQLite releases the box when the function is replaced or removed,
        // when the connection closes, and when this call fails.
        let code = sqlite3_create_function_v2(db, name, count, flags, box, { context, argc, argv in
            let box = Unmanaged<FunctionBox>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
            let arguments = (0..<Int(argc)).map { DatabaseValue(sqliteValue: argv?[$0]) }
            do {
                FunctionBox.setResult(try box.body(arguments)?.databaseValue ?? .null, of: context)
            } catch {
                sqlite3_result_error(context, "\(error)", -1)
            }
        }, nil, nil, { box in
            Unmanaged<FunctionBox>.fromOpaque(box!).release()
        })
        guard code == SQLITE_OK else { throw DatabaseError.fromConnection(db, code: code, sql: nil) }
    }

    /// Removes a function added with ``createFunction(_:argumentCount:deterministic:_:)``.
    ///
    /// - throws: ``DatabaseError/misuse(reason:)`` for a bad name
    ///   or count, or the ``DatabaseError`` SQLite reports.
    public func removeFunction(_ name: String, argumentCount: Int? = nil) throws {
        let db = try connection.open()
        let count = try Self.checkFunction(name, argumentCount)
        let code = sqlite3_create_function_v2(db, name, count, SQLITE_UTF8, nil, nil, nil, nil, nil)
        guard code == SQLITE_OK else { throw DatabaseError.fromConnection(db, code: code, sql: nil) }
    }

    /// Adds a collation written in Swift to this connection, or replaces the
    /// one of the same name: `ORDER BY title COLLATE localized` or a column
    /// declared `COLLATE localized` then sort with it.
    ///
    /// ```swift
    /// try db.createCollation("localized") { a, b in a.localizedStandardCompare(b) }
    /// let titles = try db.fetchAll(String.self, "SELECT title FROM note ORDER BY title COLLATE localized")
    /// ```
    ///
    /// `compare` must be a total order (consistent, and the same for the life
    /// of any index that uses it).
    ///
    /// - throws: ``DatabaseError/misuse(reason:)`` for a bad
    ///   name, or the ``DatabaseError`` SQLite reports.
    public func createCollation(_ name: String, _ compare: @escaping (String, String) -> ComparisonResult) throws {
        let db = try connection.open()
        _ = try Self.checkFunction(name, 0)
        let box = Unmanaged.passRetained(CollationBox(compare)).toOpaque()
        let code = sqlite3_create_collation_v2(db, name, SQLITE_UTF8, box, { context, count1, bytes1, count2, bytes2 in
            let box = Unmanaged<CollationBox>.fromOpaque(context!).takeUnretainedValue()
            let a = CollationBox.string(bytes1, count1), b = CollationBox.string(bytes2, count2)
            switch box.compare(a, b) {
            case .orderedAscending: return -1
            case .orderedSame: return 0
            case .orderedDescending: return 1
            }
        }, { box in
            Unmanaged<CollationBox>.fromOpaque(box!).release()
        })
        guard code == SQLITE_OK else {
            // Unlike functions, a failed collation call does not call the destructor.
            Unmanaged<CollationBox>.fromOpaque(box).release()
            throw DatabaseError.fromConnection(db, code: code, sql: nil)
        }
    }

    /// Calls `body` with the connection's `sqlite3 *` handle, for what DBCrypt
    /// does not wrap (import `CSQLCipher`, the SQLCipher module DBCrypt links,
    /// for the C API):
    ///
    /// ```swift
    /// import CSQLCipher
    /// let limit = try db.withSQLiteHandle { handle in sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, -1) }
    /// ```
    ///
    /// The handle is only valid inside `body`, on this thread. Do not close
    /// it, change its key or cipher settings, or finalize statements you did
    /// not prepare: DBCrypt keeps its own state about those.
    ///
    /// - throws: ``DatabaseError/connectionClosed``, or what `body` throws.
    public func withSQLiteHandle<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        try body(try connection.open())
    }

    /// The argument count as SQLite takes it, after checking the name and count.
    private static func checkFunction(_ name: String, _ argumentCount: Int?) throws -> Int32 {
        guard !name.isEmpty, name.utf8.count <= 255, !name.utf8.contains(0) else {
            throw DatabaseError.misuse(reason: "a function or collation name has 1 to 255 bytes and no NUL")
        }
        guard let argumentCount else { return -1 }
        guard (0...127).contains(argumentCount) else {
            throw DatabaseError.misuse(reason: "a function takes 0 to 127 arguments, or any number (nil)")
        }
        return Int32(argumentCount)
    }
}

/// A SQL function's Swift body, owned by SQLite through `sqlite3_create_function_v2`.
private final class FunctionBox {
    let body: ([DatabaseValue]) throws -> (any DatabaseValueConvertible)?
    init(_ body: @escaping ([DatabaseValue]) throws -> (any DatabaseValueConvertible)?) { self.body = body }

    /// Hands `value` to SQLite as the function's result, copied.
    static func setResult(_ value: DatabaseValue, of context: OpaquePointer?) {
        switch value {
        case .null:
            sqlite3_result_null(context)
        case let .integer(v):
            sqlite3_result_int64(context, v)
        case let .real(d):
            sqlite3_result_double(context, d)
        case let .text(text):
            var text = text
            text.withUTF8 { utf8 in
                guard utf8.count <= Int(Int32.max) else { return sqlite3_result_error_toobig(context) }
                guard let base = utf8.baseAddress, utf8.count > 0 else {
                    return sqlite3_result_text(context, "", 0, dbcrypt_transient())
                }
                UnsafeRawPointer(base).withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                    sqlite3_result_text(context, $0, Int32(utf8.count), dbcrypt_transient())
                }
            }
        case let .blob(data):
            data.withUnsafeBytes { bytes in
                guard bytes.count <= Int(Int32.max) else { return sqlite3_result_error_toobig(context) }
                guard let base = bytes.baseAddress, bytes.count > 0 else { return sqlite3_result_zeroblob(context, 0) }
                sqlite3_result_blob(context, base, Int32(bytes.count), dbcrypt_transient())
            }
        }
    }
}

/// A collation's Swift comparison, owned by SQLite through `sqlite3_create_collation_v2`.
private final class CollationBox {
    let compare: (String, String) -> ComparisonResult
    init(_ compare: @escaping (String, String) -> ComparisonResult) { self.compare = compare }

    /// The text SQLite hands a collation: UTF-8, not NUL-terminated.
    static func string(_ bytes: UnsafeRawPointer?, _ count: Int32) -> String {
        guard let bytes, count > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: bytes, count: Int(count)), as: UTF8.self)
    }
}
