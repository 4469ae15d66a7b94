extension Database {
    /// A lazy cursor over the rows of one query.
    ///
    /// ```swift
    /// let cursor = try db.query("SELECT id, title FROM note WHERE id > ?", [10])
    /// while let row = try cursor.next() { print(try row["title"] as String) }
    /// ```
    /// - throws: ``DatabaseError/sqlite(code:message:sql:)`` when the SQL does
    ///   not compile, ``DatabaseError/invalidArguments(reason:sql:)``.
    public func query(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws -> RowCursor {
        try cachedStatement(sql).query(arguments)
    }

    /// All rows of one query, copied.
    ///
    /// - throws: see ``query(_:_:)``, and errors while stepping.
    public func fetchAll(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws -> [Row] {
        try query(sql, arguments).all()
    }

    /// The first row of one query, copied, or nil when there is none.
    ///
    /// - throws: see ``query(_:_:)``, and errors while stepping.
    public func fetchOne(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws -> Row? {
        try query(sql, arguments).next()?.copy()
    }

    /// The first column of the first row converted to `T`; nil when there is
    /// no row or the value is NULL.
    ///
    /// ```swift
    /// let count = try db.fetchScalar(Int.self, "SELECT count(*) FROM note") ?? 0
    /// ```
    /// - throws: see ``query(_:_:)``, and ``DatabaseError/typeMismatch(column:value:type:sql:)``
    ///   when the value does not convert.
    public func fetchScalar<T: DatabaseValueConvertible>(
        _ type: T.Type, _ sql: String, _ arguments: StatementArguments = StatementArguments()
    ) throws -> T? {
        guard let row = try query(sql, arguments).next(), !row[0].isNull else { return nil }
        return try row[0] as T
    }

    /// All rows of one query decoded as `T`: each column feeds the property
    /// of the same name; a type that is itself a column value (`Int`,
    /// `String`, ...) is decoded from the first column.
    ///
    /// ```swift
    /// struct Note: Decodable { var id: Int; var title: String }
    /// let notes = try db.fetchAll(Note.self, "SELECT id, title FROM note")
    /// ```
    /// - throws: see ``query(_:_:)``; ``DatabaseError/columnNotFound(name:sql:)``,
    ///   ``DatabaseError/typeMismatch(column:value:type:sql:)`` or
    ///   ``DatabaseError/decodingFailed(column:type:sql:)`` when a row does not decode.
    @inlinable public func fetchAll<T: Decodable>(
        _ type: T.Type, _ sql: String, _ arguments: StatementArguments = StatementArguments()
    ) throws -> [T] {
        // Inlinable so that the array is built specialized for `T`: built in
        // generic code, each append looked up `[T]`'s metadata at run time.
        let cursor = try query(sql, arguments)
        let decode = rowDecoder(for: T.self, userInfo: userInfo)
        var result: [T] = []
        while let row = try cursor.next() { result.append(try decode(row)) }
        return result
    }

    /// The rows of one query decoded as `T`, one at a time, as the cursor
    /// is read: what `fetchAll` returns in an array, in the memory of one row.
    ///
    /// ```swift
    /// let notes = try db.fetchCursor(Note.self, "SELECT id, title FROM note")
    /// while let note = try notes.next() { print(note.title) }
    /// ```
    /// Read the cursor inside the closure that gave this `Database` (see
    /// ``DecodedCursor``).
    ///
    /// - throws: see ``query(_:_:)``; reading the cursor throws as
    ///   ``fetchAll(_:_:_:)-(T.Type,_,_)`` does.
    @inlinable public func fetchCursor<T: Decodable>(
        _ type: T.Type, _ sql: String, _ arguments: StatementArguments = StatementArguments()
    ) throws -> DecodedCursor<T> {
        DecodedCursor(rows: try query(sql, arguments), decode: rowDecoder(for: T.self, userInfo: userInfo))
    }

    /// The first row of one query decoded as `T`, or nil when there is none.
    ///
    /// - throws: see ``fetchAll(_:_:_:)-(T.Type,_,_)``.
    public func fetchOne<T: Decodable>(
        _ type: T.Type, _ sql: String, _ arguments: StatementArguments = StatementArguments()
    ) throws -> T? {
        guard let row = try query(sql, arguments).next() else { return nil }
        return try RowDecoder.decode(T.self, from: row, userInfo: userInfo)
    }
}
