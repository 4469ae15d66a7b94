import FluentKit
import Foundation
import Hummingbird

/// A note, as Fluent keeps it in the encrypted database.
final class Note: Model, @unchecked Sendable {
    static let schema = "notes"

    @ID(key: .id) var id: UUID?
    @Field(key: "title") var title: String
    @Field(key: "body") var body: String
    @Field(key: "done") var done: Bool
    @Timestamp(key: "updated_at", on: .update) var updatedAt: Date?

    init() {}

    init(_ input: NoteInput) {
        title = input.title
        body = input.body
        done = input.done ?? false
    }
}

/// Creates the notes table: the migration the server runs at start.
struct CreateNotes: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(Note.schema)
            .id()
            .field("title", .string, .required)
            .field("body", .string, .required)
            .field("done", .bool, .required)
            .field("updated_at", .datetime)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(Note.schema).delete()
    }
}

/// What a client sends to create or change a note.
struct NoteInput: Decodable {
    var title: String
    var body: String
    var done: Bool?
}

/// What the server answers with.
struct NoteOutput: ResponseCodable {
    var id: UUID
    var title: String
    var body: String
    var done: Bool

    init(_ note: Note) throws {
        id = try note.requireID()
        title = note.title
        body = note.body
        done = note.done
    }
}
