import DBCrypt
import DBCryptFluent
import DBCryptKeyStore
import Fluent
import Vapor

/// Vapor's configure.swift on an encrypted database: the key is the service
/// credential `notes-key` (systemd's LoadCredentialEncrypted=), the file is
/// opened at the first use, which is the migration, so a wrong key stops
/// the app here.
public func configure(_ app: Application) async throws {
    guard let key = try ServiceCredentials().loadKey(service: "", account: "notes-key") else {
        throw Abort(.internalServerError, reason: "there is no service credential notes-key")
    }
    app.databases.use(.dbcrypt(path: "notes.db", key: key), as: .dbcrypt)
    app.migrations.add(CreateTodos())
    try await app.autoMigrate()

    app.get("todos") { req async throws -> [Todo] in
        try await Todo.query(on: req.db).all()
    }
    app.post("todos") { req async throws -> Todo in
        let todo = try req.content.decode(Todo.self)
        try await todo.save(on: req.db)
        return todo
    }
}
