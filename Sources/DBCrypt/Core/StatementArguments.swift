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
    /// The first value that could not be converted (a `Date` that is not
    /// finite, ...): thrown when the arguments are bound.
    let conversionError: DatabaseError?

    /// No arguments.
    public init() {
        storage = .positional([])
        conversionError = nil
    }

    /// Positional arguments, bound to `?` parameters in order. A value that
    /// cannot be stored makes binding throw.
    public init(_ values: [(any DatabaseValueConvertible)?]) {
        var error: DatabaseError?
        storage = .positional(values.map { Self.convert($0, error: &error) })
        conversionError = error
    }

    /// Named arguments, bound to `:name`, `@name` or `$name` parameters.
    /// Keys may be written with or without the prefix. A value that cannot
    /// be stored makes binding throw.
    public init(_ values: [String: (any DatabaseValueConvertible)?]) {
        self.init(named: values.map { ($0.key, $0.value) })
    }

    /// Positional arguments already converted (a record's columns).
    init(databaseValues: [DatabaseValue]) {
        storage = .positional(databaseValues)
        conversionError = nil
    }

    /// Positional arguments from an array literal.
    public init(arrayLiteral elements: (any DatabaseValueConvertible)?...) {
        self.init(elements)
    }

    /// Named arguments from a dictionary literal.
    public init(dictionaryLiteral elements: (String, (any DatabaseValueConvertible)?)...) {
        self.init(named: elements)
    }

    private init(named elements: [(String, (any DatabaseValueConvertible)?)]) {
        var error: DatabaseError?
        var named: [String: DatabaseValue] = [:]
        for (key, value) in elements { named[Self.bareName(key)] = Self.convert(value, error: &error) }
        storage = .named(named)
        conversionError = error
    }

    /// The stored form of `value`; NULL, with `error` set, when it has none.
    private static func convert(_ value: (any DatabaseValueConvertible)?, error: inout DatabaseError?) -> DatabaseValue {
        guard let value else { return .null }
        do {
            return try value.databaseValue
        } catch let failure {
            if error == nil {
                // Only the types: the failure's own text may quote the value.
                error = failure as? DatabaseError ?? .invalidArguments(
                    reason: "a \(type(of: value)) cannot be stored (\(type(of: failure)))", sql: nil)
            }
            return .null
        }
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
