import Foundation

// UUID, URL and Decimal as column values: what records store them as, and
// what statements bind them as.

extension UUID: DatabaseValueConvertible {
    /// Text, the 36 characters of `uuidString` (`E621E1F8-C36C-495A-93FC-0C247A3E6E5F`):
    /// readable in the `sqlcipher` shell and by any other language, and
    /// compared with `=` as it was written. (GRDB writes a 16-byte blob;
    /// both are read back.)
    @inlinable public var databaseValue: DatabaseValue { .text(uuidString) }

    /// Text in either case, or a blob of 16 bytes; nil for anything else.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> UUID? {
        switch value {
        case let .text(text): return UUID(uuidString: text)
        case let .blob(data) where data.count == 16:
            return data.withUnsafeBytes { bytes in UUID(uuid: bytes.loadUnaligned(as: uuid_t.self)) }
        default: return nil
        }
    }
}

extension URL: DatabaseValueConvertible {
    /// Text, the URL's `absoluteString`.
    @inlinable public var databaseValue: DatabaseValue { .text(absoluteString) }

    /// Text that `URL(string:)` accepts; nil for anything else.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> URL? {
        guard case let .text(text) = value else { return nil }
        return URL(string: text)
    }
}

extension Decimal: DatabaseValueConvertible {
    /// Text (`"12.50"` is stored as `"12.5"`): a REAL column would round it
    /// to a `Double`, which is what `Decimal` is chosen to avoid. Compare
    /// and sum such columns in Swift, or `CAST` them knowingly.
    public var databaseValue: DatabaseValue { .text(description) }

    /// Text in the `"-12.5"` / `"1e-3"` form (a dot, whatever the locale),
    /// or an integer; a real converts through its `Double` value. Nil for
    /// anything else.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Decimal? {
        switch value {
        case let .text(text): return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        case let .integer(integer): return Decimal(integer)
        case let .real(real) where real.isFinite: return Decimal(real)
        default: return nil
        }
    }
}
