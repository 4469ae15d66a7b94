/// A sequence whose `next()` can throw: the rows of a query, read one step
/// at a time.
///
/// Swift's `Sequence` and `IteratorProtocol` require a `next()` that cannot
/// throw, and stepping a SQLite statement can fail at any row (a busy
/// database, a damaged page, a function that throws), so a cursor is not a
/// `Sequence`: `for row in cursor` is written `while let row = try cursor.next()`.
/// The everyday `Sequence` methods are here instead, throwing where stepping
/// or the closure throws:
///
/// A ``RowCursor``'s rows read the cursor's current position: read them in
/// the closure, or keep ``Row/copy()``s (``RowCursor/all()`` copies them all).
///
/// ```swift
/// let titles = try db.query("SELECT title FROM note").map { row in try row[0] as String }
/// let firstLong = try db.query("SELECT * FROM note").first { row in (try row["body"] as String).count > 100 }
/// ```
public protocol Cursor: AnyObject {
    /// What the cursor produces.
    associatedtype Element
    /// The next element, or nil when there are no more.
    ///
    /// - throws: what stepping the query throws.
    func next() throws -> Element?
}

extension Cursor {
    /// Calls `body` with each remaining element.
    ///
    /// - throws: what stepping or `body` throws.
    @inlinable public func forEach(_ body: (Element) throws -> Void) throws {
        while let element = try next() { try body(element) }
    }

    /// The results of `transform` on each remaining element.
    ///
    /// - throws: what stepping or `transform` throws.
    @inlinable public func map<T>(_ transform: (Element) throws -> T) throws -> [T] {
        var result: [T] = []
        while let element = try next() { result.append(try transform(element)) }
        return result
    }

    /// The non-nil results of `transform` on each remaining element.
    ///
    /// - throws: what stepping or `transform` throws.
    @inlinable public func compactMap<T>(_ transform: (Element) throws -> T?) throws -> [T] {
        var result: [T] = []
        while let element = try next() { if let value = try transform(element) { result.append(value) } }
        return result
    }

    /// The first remaining element that satisfies `predicate`, or nil.
    /// The cursor stops there: later elements are not read.
    ///
    /// - throws: what stepping or `predicate` throws.
    @inlinable public func first(where predicate: (Element) throws -> Bool) throws -> Element? {
        while let element = try next() { if try predicate(element) { return element } }
        return nil
    }

    /// Whether a remaining element satisfies `predicate`.
    ///
    /// - throws: what stepping or `predicate` throws.
    @inlinable public func contains(where predicate: (Element) throws -> Bool) throws -> Bool {
        try first(where: predicate) != nil
    }

    /// The remaining elements combined with `combine`, starting from `initial`.
    ///
    /// - throws: what stepping or `combine` throws.
    @inlinable public func reduce<T>(_ initial: T, _ combine: (T, Element) throws -> T) throws -> T {
        var result = initial
        while let element = try next() { result = try combine(result, element) }
        return result
    }
}

/// A lazy cursor over the rows of a query decoded as `T`: each call to
/// ``next()`` steps the statement once and decodes that row, so a query of
/// any size is read in the memory of one row (where `fetchAll` keeps them
/// all). Made by ``Database/fetchCursor(_:_:_:)`` and ``Record/fetchCursor(_:)``.
///
/// ```swift
/// let notes = try db.fetchCursor(Note.self, "SELECT id, title FROM note")
/// while let note = try notes.next() {
///     print(note.title)
/// }
/// ```
///
/// Each value is decoded as `fetchAll` decodes it, and is the caller's to
/// keep. Like a ``RowCursor``, it belongs to the `Database` it was made on:
/// read it inside the closure that gave that `Database` (a queue's or a
/// pool's), never after it returns. Its statement stays busy until the
/// cursor has read its last row or is released, which also releases
/// SQLite's read lock.
public final class DecodedCursor<T: Decodable>: Cursor {
    @usableFromInline let rows: RowCursor
    /// Nil once the rows are done: the query's decoding ends with them.
    @usableFromInline var decode: ((Row) throws -> T)?

    @usableFromInline init(rows: RowCursor, decode: @escaping (Row) throws -> T) {
        self.rows = rows
        self.decode = decode
    }

    /// The names of the result columns.
    public var columnNames: [String] { rows.columnNames }

    /// The next row decoded, or nil when there are no more. After a row
    /// that does not decode, the cursor goes on with the next.
    ///
    /// - throws: the ``DatabaseError`` SQLite reports while stepping
    ///   (``DatabaseError/connectionClosed`` when the connection has been
    ///   closed), and those of decoding (see ``Database/fetchAll(_:_:_:)-(T.Type,_,_)``).
    @inlinable public func next() throws -> T? {
        guard let decode else { return nil }
        let row: Row
        do {
            guard let next = try rows.next() else {
                self.decode = nil
                return nil
            }
            row = next
        } catch {
            self.decode = nil
            throw error
        }
        return try decode(row)
    }
}
