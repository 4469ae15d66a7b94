#if SQLKit
import CSQLCipher
import SQLKit

/// The version of the SQLite inside the linked SQLCipher (3.15.2 in Debian
/// 12's SQLCipher 3.4.1, 3.46 in Debian 13's 4.6.1), as SQLKit asks a
/// database for it: what tells the dialect which SQL the engine has.
public struct SQLiteVersion: SQLDatabaseReportedVersion {
    /// The version as SQLite numbers it: 3_046_001 for 3.46.1.
    public let number: Int

    /// The SQLite of the linked SQLCipher.
    public static let linked = SQLiteVersion(number: Int(sqlite3_libversion_number()))

    /// The version numbered `number` (3_046_001 for 3.46.1).
    public init(number: Int) { self.number = number }

    /// "3.46.1".
    public var stringValue: String { "\(number / 1_000_000).\(number / 1_000 % 1_000).\(number % 1_000)" }

    /// Whether this is at least `major.minor.patch`.
    public func isAtLeast(_ major: Int, _ minor: Int, _ patch: Int = 0) -> Bool {
        number >= major * 1_000_000 + minor * 1_000 + patch
    }

    /// Whether `otherVersion` is an SQLite version equal to this one.
    public func isEqual(to otherVersion: any SQLDatabaseReportedVersion) -> Bool {
        (otherVersion as? SQLiteVersion)?.number == number
    }

    /// Whether this is older than `otherVersion`, an SQLite version.
    public func isOlder(than otherVersion: any SQLDatabaseReportedVersion) -> Bool {
        (otherVersion as? SQLiteVersion).map { number < $0.number } ?? false
    }
}
#endif
