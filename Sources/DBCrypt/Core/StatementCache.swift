/// A connection's prepared statements, kept for SQL that runs again and
/// bounded: at most `capacity` statements, the least recently used finalized
/// first.
///
/// SQL is cached the second time it is seen, so one-off SQL (interpolated
/// values, ad hoc queries) is finalized at once instead of pushing out the
/// statements an app runs all the time. What was seen once is remembered as
/// a hash in a bounded set: a collision only caches a statement early.
struct StatementCache {
    /// The most statements kept; 0 keeps none.
    let capacity: Int
    private var statements: [String: Statement] = [:]
    private var seenOnce: Set<Int> = []
    private var clock: UInt64 = 0
    /// The statement returned last, found again without hashing its SQL:
    /// the same SQL run in a loop (a record type's INSERT) is usually the
    /// same string, which compares equal at once.
    private var last: (sql: String, statement: Statement)?

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// The number of statements kept.
    var count: Int { statements.count }

    /// The statement kept for `sql`, marked as just used.
    mutating func statement(for sql: String) -> Statement? {
        clock &+= 1
        if let last, last.sql == sql {
            last.statement.lastUse = clock
            return last.statement
        }
        guard let statement = statements[sql] else { return nil }
        statement.lastUse = clock
        last = (sql, statement)
        return statement
    }

    /// Keeps `statement` for `sql` when `sql` was seen before and no statement
    /// is kept for it yet, finalizing the least recently used one when full.
    mutating func offer(_ statement: Statement, for sql: String) {
        guard capacity > 0, statements[sql] == nil else { return }
        let hash = sql.hashValue
        guard seenOnce.remove(hash) != nil else {
            if seenOnce.count >= max(256, capacity * 8) { seenOnce.removeAll(keepingCapacity: true) }
            seenOnce.insert(hash)
            return
        }
        if statements.count >= capacity, let oldest = statements.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            statements[oldest.key] = nil
            if last?.sql == oldest.key { last = nil }
        }
        clock &+= 1
        statement.lastUse = clock
        statements[sql] = statement
    }

    /// Forgets every statement (each is finalized once no cursor holds it).
    mutating func removeAll() {
        statements.removeAll()
        seenOnce.removeAll()
        last = nil
    }
}
