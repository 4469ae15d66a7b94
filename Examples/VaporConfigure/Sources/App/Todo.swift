import Fluent
import Vapor

final class Todo: Model, Content, @unchecked Sendable {
    static let schema = "todos"
    @ID(key: .id) var id: UUID?
    @Field(key: "title") var title: String
    init() {}
}

struct CreateTodos: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("todos").id().field("title", .string, .required).create()
    }
    func revert(on database: any Database) async throws {
        try await database.schema("todos").delete()
    }
}
