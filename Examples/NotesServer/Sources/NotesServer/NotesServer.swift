import DBCrypt
import DBCryptFluent
import DBCryptKeyStore
import FluentKit
import Foundation
import Hummingbird
import Logging
import NIOPosix
import ServiceLifecycle

/// A notes server on an encrypted database.
///
/// - `NOTES_DATABASE`: the database file (`notes.db`).
/// - `NOTES_PORT`: the loopback port (8080).
/// - The key is the service credential `notes-key`: the file of that name
///   in `$CREDENTIALS_DIRECTORY`, as systemd's `LoadCredentialEncrypted=`
///   gives it to the service.
@main
struct NotesServer {
    static func main() async {
        let environment = ProcessInfo.processInfo.environment
        let path = environment["NOTES_DATABASE"] ?? "notes.db"
        let port = Int(environment["NOTES_PORT"] ?? "") ?? 8080
        var logger = Logger(label: "NotesServer")
        logger.logLevel = .notice
        do {
            guard let key = try ServiceCredentials().loadKey(service: "", account: "notes-key") else {
                fail("there is no service credential notes-key: set CREDENTIALS_DIRECTORY to a folder that holds it")
            }
            let databases = Databases(threadPool: .singleton, on: MultiThreadedEventLoopGroup.singleton)
            databases.use(.dbcrypt(path: path, key: key), as: .dbcrypt)
            let db = databases.database(logger: logger, on: MultiThreadedEventLoopGroup.singleton.any())!
            // Migrations run at start: a wrong key or a damaged file stops the server here.
            let migrations = Migrations()
            migrations.add(CreateNotes())
            let migrator = Migrator(databases: databases, migrations: migrations, logger: logger, on: db.eventLoop)
            do {
                try await migrator.setupIfNeeded().get()
                try await migrator.prepareBatch().get()
            } catch {
                await databases.shutdownAsync()
                // DBCrypt's errors name the file and say what to do.
                fail("\(error)")
            }

            let router = Router()
            addNoteRoutes(to: router, database: db)
            let app = Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
                services: [DatabasesService(databases: databases)], logger: logger)
            try await app.runService()
        } catch {
            fail("\(error)")
        }
    }

    /// Prints one line to standard error and exits with status 1.
    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("NotesServer: \(message)\n".utf8))
        exit(1)
    }
}

/// Keeps Fluent's databases open while the server runs, and closes them
/// (the pool checkpoints its WAL into the file) when it stops.
struct DatabasesService: Service {
    let databases: Databases

    func run() async throws {
        try? await gracefulShutdown()
        await databases.shutdownAsync()
    }
}
