/// The values bound to a statement's parameters: positional (`?`, `?NNN`) or
/// named (`:name`, `@name`, `$name`).
///
/// Written as an array or dictionary literal wherever arguments are taken:
///
/// ```swift
/// try db.execute("INSERT INTO note(title, body) VALUES (?, ?)", ["Hello", nil])
/// try db.execute("UPDATE note SET title = :title WHERE id = :id", ["title": "Hi", "id": 1])
/// ```
///
/// Arguments are bound through SQLite's bind API, never spliced into SQL
/// text, and never appear in an error.
public struct StatementArguments: Sendable, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    enum Storage: Sendable {
        case positional([DatabaseValue])
        case named([String: DatabaseValue])
    }

    let storage: Storage

    /// No arguments.
    public init() { storage = .positional([]) }

    /// Positional arguments, bound to `?` parameters in order.
    public init(_ values: [(any DatabaseValueConvertible)?]) {
        storage = .positional(values.map { $0?.databaseValue ?? .null })
    }

    /// Named arguments, bound to `:name`, `@name` or `$name` parameters.
    /// Keys may be written with or without the prefix.
    public init(_ values: [String: (any DatabaseValueConvertible)?]) {
        var named: [String: DatabaseValue] = [:]
        for (key, value) in values { named[Self.bareName(key)] = value?.databaseValue ?? .null }
        storage = .named(named)
    }

    /// Positional arguments from an array literal.
    public init(arrayLiteral elements: (any DatabaseValueConvertible)?...) {
        self.init(elements)
    }

    /// Named arguments from a dictionary literal.
    public init(dictionaryLiteral elements: (String, (any DatabaseValueConvertible)?)...) {
        var named: [String: DatabaseValue] = [:]
        for (key, value) in elements { named[Self.bareName(key)] = value?.databaseValue ?? .null }
        storage = .named(named)
    }

    /// Whether there are no arguments.
    public var isEmpty: Bool {
        switch storage {
        case let .positional(values): return values.isEmpty
        case let .named(values): return values.isEmpty
        }
    }

    static func bareName(_ name: String) -> String {
        guard let first = name.first, ":@$".contains(first) else { return name }
        return String(name.dropFirst())
    }
}
