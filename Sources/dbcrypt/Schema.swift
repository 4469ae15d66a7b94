import ArgumentParser
import DBCrypt
import Foundation

/// `dbcrypt schema`: apply or list schema migrations.
struct Schema: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply pending schema migrations from a directory of NNNN_name.sql files.",
        discussion: """
            Each migration runs in its own transaction and is recorded in the table \
            dbcrypt_migrations; user_version becomes the number of the last one applied. An \
            applied migration whose file changed or is gone, two files with one number, a \
            misnamed .sql file, or a database migrated past the files refuses the run before \
            anything changes. A database that does not exist is created: encrypted when a key \
            is given, plaintext otherwise. A database whose schema was versioned by hand \
            with user_version adopts the migrations with --baseline-from-user-version: those \
            numbered up to its user_version are recorded as applied without running.

            Example:
              dbcrypt schema app.db --dir Migrations --key-env APP_KEY
              dbcrypt schema app.db --dir Migrations --key-env APP_KEY --status
            """)

    @Argument(help: "The database.")
    var database: String

    @Option(help: ArgumentHelp("The directory of migrations.", valueName: "DIR"))
    var dir: String

    @Flag(help: "List applied and pending migrations instead of applying them.")
    var status = false

    @Flag(help: "On a database with no migration record yet, record the migrations up to its user_version as applied.")
    var baselineFromUserVersion = false

    @OptionGroup var key: KeyOptions
    @OptionGroup(title: "Cipher settings of the database, if not a standard format") var cipher: CipherOptions

    func run() throws {
        var migrator = SchemaMigrator()
        migrator.baselineFromUserVersion = baselineFromUserVersion
        try migrator.loadDirectory(dir)
        let format = try FileFormat.detect(at: database)
        let databaseKey = try key.keyIfNeeded(for: database, format: format, creates: true)
        var options = cipher.databaseOptions()
        options.create = true
        let db = try Database(path: database, key: databaseKey, options: options)
        try db.closing {
            if status {
                try requireIntact(db)
                for entry in try migrator.status(db) {
                    try StandardStreams.say(String(format: "%04d", entry.number) + "_\(entry.name)  " + (entry.appliedAt.map { "applied \($0)" } ?? "pending"))
                }
                return
            }
            // Writing to a damaged file can only make it worse.
            if try migrator.status(db).contains(where: { $0.appliedAt == nil }) { try requireIntact(db) }
            let applied = try migrator.migrate(db)
            for migration in applied { try StandardStreams.say("applied \(migration.source == "code" ? migration.name : migration.source)") }
            if applied.isEmpty { try StandardStreams.say("up to date: no pending migration") }
        }
    }

    /// Refuses a damaged database (exit 4), as check does: its status is not
    /// "fine", and migrating it would write to it.
    private func requireIntact(_ db: Database) throws {
        let problems: [String]
        do {
            problems = try db.integrityProblems(quick: true)
        } catch let error as DatabaseError where error.category == .damaged {
            problems = [error.description]
        }
        guard problems.isEmpty else {
            throw CLIError("\(database) is damaged (\(problems.prefix(3).joined(separator: "; "))): run dbcrypt check for details.",
                           category: .damaged)
        }
    }
}
