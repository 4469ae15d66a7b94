import FluentKit
import Foundation
import Hummingbird

/// The notes API: `GET /notes`, `POST /notes`, `GET|PUT|DELETE /notes/{id}`.
func addNoteRoutes(to router: Router<BasicRequestContext>, database db: any Database) {
    router.get("notes") { _, _ -> [NoteOutput] in
        try await Note.query(on: db).sort(\.$title).all().map(NoteOutput.init)
    }
    router.post("notes") { request, context -> EditedResponse<NoteOutput> in
        let note = Note(try await request.decode(as: NoteInput.self, context: context))
        try await note.create(on: db)
        return EditedResponse(status: .created, response: try NoteOutput(note))
    }
    router.get("notes/:id") { _, context -> NoteOutput in
        try NoteOutput(try await findNote(context, on: db))
    }
    router.put("notes/:id") { request, context -> NoteOutput in
        let input = try await request.decode(as: NoteInput.self, context: context)
        // Read and write in one transaction: two updates of one note never interleave.
        let id = try context.parameters.require("id", as: UUID.self)
        return try await db.transaction { tx in
            guard let note = try await Note.find(id, on: tx) else { throw HTTPError(.notFound) }
            note.title = input.title
            note.body = input.body
            note.done = input.done ?? note.done
            try await note.save(on: tx)
            return try NoteOutput(note)
        }
    }
    router.delete("notes/:id") { _, context -> HTTPResponse.Status in
        try await findNote(context, on: db).delete(on: db)
        return .noContent
    }
}

/// The note the path names, or 404.
private func findNote(_ context: BasicRequestContext, on db: any Database) async throws -> Note {
    let id = try context.parameters.require("id", as: UUID.self)
    guard let note = try await Note.find(id, on: db) else { throw HTTPError(.notFound) }
    return note
}
