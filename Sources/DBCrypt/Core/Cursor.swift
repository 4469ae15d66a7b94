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
    public func forEach(_ body: (Element) throws -> Void) throws {
        while let element = try next() { try body(element) }
    }

    /// The results of `transform` on each remaining element.
    ///
    /// - throws: what stepping or `transform` throws.
    public func map<T>(_ transform: (Element) throws -> T) throws -> [T] {
        var result: [T] = []
        while let element = try next() { result.append(try transform(element)) }
        return result
    }

    /// The non-nil results of `transform` on each remaining element.
    ///
    /// - throws: what stepping or `transform` throws.
    public func compactMap<T>(_ transform: (Element) throws -> T?) throws -> [T] {
        var result: [T] = []
        while let element = try next() { if let value = try transform(element) { result.append(value) } }
        return result
    }

    /// The first remaining element that satisfies `predicate`, or nil.
    /// The cursor stops there: later elements are not read.
    ///
    /// - throws: what stepping or `predicate` throws.
    public func first(where predicate: (Element) throws -> Bool) throws -> Element? {
        while let element = try next() { if try predicate(element) { return element } }
        return nil
    }

    /// Whether a remaining element satisfies `predicate`.
    ///
    /// - throws: what stepping or `predicate` throws.
    public func contains(where predicate: (Element) throws -> Bool) throws -> Bool {
        try first(where: predicate) != nil
    }

    /// The remaining elements combined with `combine`, starting from `initial`.
    ///
    /// - throws: what stepping or `combine` throws.
    public func reduce<T>(_ initial: T, _ combine: (T, Element) throws -> T) throws -> T {
        var result = initial
        while let element = try next() { result = try combine(result, element) }
        return result
    }
}
