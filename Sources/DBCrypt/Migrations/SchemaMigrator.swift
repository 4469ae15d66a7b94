import CPrimitives
import CSQLCipher
import Foundation

/// Versioned schema migrations, from `.sql` files and from code, applied in
/// order on a ``Database`` or through a ``DatabaseQueue``, each in its own
/// transaction.
///
/// ```swift
/// var migrator = SchemaMigrator()
/// try migrator.loadDirectory("Migrations")                 // 0001_create_notes.sql, 0002_add_tags.sql, ...
/// migrator.registerMigration(3, "backfill_tags") { db in   // code, in the same order
///     try db.execute("UPDATE note SET tags = '' WHERE tags IS NULL")
/// }
/// try migrator.migrate(queue)
/// ```
///
/// The migrator records what it applied in the table `dbcrypt_migrations`
/// (number, name, SHA-256 of the file or a checksum given for code, time)
/// and sets `PRAGMA user_version` to the number of the last one applied.
/// Before changing anything it refuses, with a ``SchemaMigrationError``: an
/// applied migration that changed or is gone, two migrations with one number,
/// a file name that is not `NNNN_name.sql`, and a database migrated past the
/// migrations it is given.
///
/// Migrations run with foreign key enforcement off, so SQLite's documented
/// way of changing a table (create the new one, copy, drop the old one,
/// rename) does not cascade-delete or refuse child rows; when the database
/// had enforcement on, `PRAGMA foreign_key_check` runs before each commit and
/// a migration that leaves a broken reference is rolled back. A migration
/// that cannot run in a transaction (`VACUUM`) says so: in code with
/// `inTransaction: false`, in a file with a first line `-- dbcrypt: no-transaction`;
/// only its record is then written in a transaction, and what it did before
/// failing stays done.
///
/// An app that versioned its schema by hand with `PRAGMA user_version`
/// adopts the migrator with ``baselineFromUserVersion``.
public struct SchemaMigrator {
    /// One migration.
    public struct Migration {
        /// Its number, which orders migrations and becomes `user_version`.
        public let number: Int
        /// Its name (from the file name, or given with the code).
        public let name: String
        /// SHA-256 of the file, or the checksum given for code.
        public let checksum: String
        /// Where it comes from: the file name, or "code".
        public let source: String
        /// Whether it runs inside a transaction (all but those that cannot,
        /// such as `VACUUM`).
        public let inTransaction: Bool
        let run: (Database) throws -> Void
    }

    /// Whether a migration was applied.
    public struct Status: Equatable, Sendable {
        /// The migration's number.
        public let number: Int
        /// The migration's name.
        public let name: String
        /// When it was applied (UTC, `YYYY-MM-DD HH:MM:SS`), or nil when pending.
        public let appliedAt: String?
    }

    /// The migrations, ordered by number.
    public private(set) var migrations: [Migration] = []
    /// Adopt a database whose schema was versioned by hand: when it has no
    /// record of migrations yet and its `user_version` is N > 0, the
    /// migrations numbered up to N are recorded as applied without running
    /// (their changes are already there), and the later ones run. Default: false.
    public var baselineFromUserVersion = false
    /// File names that do not fit `NNNN_name.sql`, reported when migrating.
    private var invalidFiles: [String] = []

    /// The name of the table that records applied migrations.
    public static let table = "dbcrypt_migrations"

    /// An empty migrator.
    public init() {}

    // MARK: - Registering

    /// Adds a migration in code. `checksum` is recorded and compared like a
    /// file's: change it when the code's effect changes. With `inTransaction`
    /// false the body runs outside a transaction (for `VACUUM`), and only its
    /// record is written in one.
    public mutating func registerMigration(
        _ number: Int, _ name: String, checksum: String = "", inTransaction: Bool = true,
        _ body: @escaping (Database) throws -> Void
    ) {
        add(Migration(number: number, name: name, checksum: checksum, source: "code", inTransaction: inTransaction, run: body))
    }

    /// The first line that makes a `.sql` migration run outside a transaction.
    public static let noTransactionMarker = "-- dbcrypt: no-transaction"

    /// Adds every `NNNN_name.sql` file of `directory` (other files, and files
    /// starting with a dot, are ignored; a `.sql` file with another name is
    /// reported when migrating).
    ///
    /// - throws: ``SchemaMigrationError/unreadableDirectory(path:reason:)``.
    public mutating func loadDirectory(_ directory: String) throws {
        guard let folder = opendir(directory) else {
            throw SchemaMigrationError.unreadableDirectory(path: directory, reason: String(cString: strerror(errno)))
        }
        var names: [String] = []
        errno = 0
        while let entry = readdir(folder) {
            names.append(withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) })
        }
        let listingError = errno
        closedir(folder)
        guard listingError == 0 else {
            throw SchemaMigrationError.unreadableDirectory(path: directory, reason: String(cString: strerror(listingError)))
        }
        for file in names.sorted() where file.hasSuffix(".sql") && !file.hasPrefix(".") {
            guard let (number, name) = Self.parse(file) else {
                invalidFiles.append(file)
                continue
            }
            let path = (directory as NSString).appendingPathComponent(file)
            let data = try Self.contents(of: path)
            let sql = String(decoding: data, as: UTF8.self)
            let firstLine = sql.prefix { $0 != "\n" && $0 != "\r\n" }.trimmingCharacters(in: .whitespaces)
            add(Migration(number: number, name: name, checksum: try Self.sha256(data, of: path), source: file,
                          inTransaction: firstLine != Self.noTransactionMarker) { db in
                try db.executeScript(sql) { _ in }
            })
        }
    }

    /// The bytes of the migration file at `path`, which must be a regular
    /// file (a FIFO would block the read forever), of at most 64 MiB.
    private static func contents(of path: String) throws -> Data {
        do throws(FileError) {
            return try FileReader(path: path).readAll(limit: 64 << 20).withUnsafeBytes { Data($0) }
        } catch .isDirectory, .notRegularFile {
            throw SchemaMigrationError.unreadableDirectory(path: path, reason: "it is not a regular file")
        } catch {
            throw SchemaMigrationError.unreadableDirectory(path: path, reason: error.reason)
        }
    }

    private mutating func add(_ migration: Migration) {
        migrations.append(migration)
        migrations.sort { ($0.number, $0.source) < ($1.number, $1.source) }
    }

    /// `0007_add_tags.sql` → (7, "add_tags").
    static func parse(_ file: String) -> (Int, String)? {
        let stem = file.dropLast(4)
        guard let underscore = stem.firstIndex(of: "_") else { return nil }
        let digits = stem[..<underscore], name = stem[stem.index(after: underscore)...]
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(digits), !name.isEmpty,
              name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }) else { return nil }
        return (number, String(name))
    }

    /// The file's checksum: SHA-256 of `data` in lowercase hex.
    ///
    /// - throws: ``SchemaMigrationError/unreadableDirectory(path:reason:)``
    ///   naming `path` when the hash could not be computed (out of memory).
    static func sha256(_ data: Data, of path: String) throws -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        guard data.withUnsafeBytes({ dbcrypt_sha256($0.baseAddress, $0.count, &digest) }) == 1 else {
            throw SchemaMigrationError.unreadableDirectory(path: path, reason: "its SHA-256 checksum could not be computed")
        }
        return Hex.encode(digest)
    }

    // MARK: - Running

    /// Every migration with whether and when it was applied.
    ///
    /// - throws: the refusals of ``migrate(_:upTo:)-(Database,_)``, or a ``DatabaseError``.
    public func status(_ db: Database) throws -> [Status] {
        let applied = try check(db)
        return migrations.map { Status(number: $0.number, name: $0.name, appliedAt: applied[$0.number]?.appliedAt) }
    }

    /// Every migration with whether and when it was applied, read through a
    /// queue's or a pool's writer.
    ///
    /// - throws: see ``status(_:)-(Database)``.
    public func status(_ writer: some DatabaseWriter) throws -> [Status] {
        try writer.writeWithoutTransaction { db in try status(db) }
    }

    /// Applies the pending migrations in order (up to and including `upTo`
    /// when given), each in its own transaction, and returns those it applied.
    /// It runs outside any transaction, because foreign key enforcement can
    /// only be turned off outside one.
    ///
    /// - throws: a ``SchemaMigrationError`` refusal before anything changes
    ///   (``SchemaMigrationError/insideTransaction`` when called inside one);
    ///   ``SchemaMigrationError/failed(_:name:error:)`` when a migration fails
    ///   or leaves a broken foreign key: it is rolled back, except for what a
    ///   migration that runs outside a transaction did before it failed; the
    ///   ones before it stay applied. Or a ``DatabaseError``.
    @discardableResult
    public func migrate(_ db: Database, upTo last: Int? = nil) throws -> [Migration] {
        guard !db.isInsideTransaction else { throw SchemaMigrationError.insideTransaction }
        var applied = try check(db)
        if baselineFromUserVersion && applied.isEmpty {
            applied = try adoptUserVersion(db)
        }
        let enforcesForeignKeys = try db.fetchScalar(Bool.self, "PRAGMA foreign_keys") ?? false
        if enforcesForeignKeys { try db.execute("PRAGMA foreign_keys = OFF") }
        defer { if enforcesForeignKeys { try? db.execute("PRAGMA foreign_keys = ON") } }
        var done: [Migration] = []
        for migration in migrations where applied[migration.number] == nil {
            if let last, migration.number > last { break }
            do {
                if !migration.inTransaction { try migration.run(db) }
                try db.inTransaction(.immediate) { db in
                    if migration.inTransaction { try migration.run(db) }
                    if enforcesForeignKeys { try Self.checkForeignKeys(db) }
                    try record(migration, in: db)
                }
            } catch {
                throw SchemaMigrationError.failed(migration.number, name: migration.name, error: "\(error)")
            }
            done.append(migration)
        }
        return done
    }

    /// Applies the pending migrations through a queue's or a pool's writer.
    ///
    /// - throws: see ``migrate(_:upTo:)-(Database,_)``.
    @discardableResult
    public func migrate(_ writer: some DatabaseWriter, upTo last: Int? = nil) throws -> [Migration] {
        try writer.writeWithoutTransaction { db in try migrate(db, upTo: last) }
    }

    /// Records `migration` as applied and sets `user_version` to its number.
    private func record(_ migration: Migration, in db: Database) throws {
        try db.execute("CREATE TABLE IF NOT EXISTS \(Self.table) (number INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)")
        try db.execute("INSERT INTO \(Self.table)(number, name, checksum, applied_at) VALUES (?, ?, ?, datetime('now'))",
                       [migration.number, migration.name, migration.checksum])
        try db.execute("PRAGMA user_version = \(migration.number)")
    }

    /// Records the migrations up to the database's `user_version` as applied,
    /// without running them, and returns what is then applied.
    private func adoptUserVersion(_ db: Database) throws -> [Int: (name: String, checksum: String, appliedAt: String)] {
        let version = try db.fetchScalar(Int.self, "PRAGMA user_version") ?? 0
        guard version > 0 else { return [:] }
        let lastKnown = migrations.last?.number ?? 0
        guard version <= lastKnown else {
            throw SchemaMigrationError.databaseIsNewer(appliedUpTo: version, knownUpTo: lastKnown)
        }
        try db.inTransaction(.immediate) { db in
            for migration in migrations where migration.number <= version { try record(migration, in: db) }
            try db.execute("PRAGMA user_version = \(version)")
        }
        return try check(db)
    }

    /// Throws when a row refers to a row that does not exist.
    private static func checkForeignKeys(_ db: Database) throws {
        guard let violation = try db.fetchOne("PRAGMA foreign_key_check") else { return }
        let table: String = try violation[0], parent: String = try violation[2]
        throw DatabaseError.sqlite(
            code: SQLITE_CONSTRAINT | (3 << 8),  // SQLITE_CONSTRAINT_FOREIGNKEY
            message: "a row of \(table) refers to a row of \(parent) that does not exist (PRAGMA foreign_key_check)",
            sql: nil)
    }

    /// What was applied, after every refusal has been checked. Reads only.
    private func check(_ db: Database) throws -> [Int: (name: String, checksum: String, appliedAt: String)] {
        if let file = invalidFiles.first { throw SchemaMigrationError.invalidFileName(file: file) }
        for (earlier, later) in zip(migrations, migrations.dropFirst()) where earlier.number == later.number {
            throw SchemaMigrationError.duplicateNumber(earlier.number, first: earlier.source, second: later.source)
        }
        var applied: [Int: (name: String, checksum: String, appliedAt: String)] = [:]
        let hasTable = try db.fetchScalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [Self.table]) == 1
        if hasTable {
            for row in try db.fetchAll("SELECT number, name, checksum, applied_at FROM \(Self.table) ORDER BY number") {
                applied[try row[0]] = (try row[1], try row[2], try row[3])
            }
        }
        let known = Dictionary(migrations.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
        let lastKnown = migrations.last?.number ?? 0
        for (number, record) in applied.sorted(by: { $0.key < $1.key }) {
            guard let migration = known[number] else {
                if number > lastKnown { throw SchemaMigrationError.databaseIsNewer(appliedUpTo: applied.keys.max()!, knownUpTo: lastKnown) }
                throw SchemaMigrationError.appliedMigrationMissing(number, name: record.name)
            }
            if migration.checksum != record.checksum {
                throw SchemaMigrationError.appliedMigrationChanged(number, name: migration.source == "code" ? migration.name : migration.source)
            }
        }
        return applied
    }
}
