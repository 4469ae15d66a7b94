// The models written by Vapor's SQLite driver (fluent-sqlite-driver 4.9.0,
// plaintext) into the fixture fluent-sqlite-driver.db, and read back by
// DBCryptFluent once the file is encrypted. The same file is compiled into
// Benchmarks/FluentComparison (a link), which writes the fixture and reads
// a decrypted file back with Vapor's driver: one definition for both.
import FluentKit
import Foundation

/// Every kind of value Fluent stores: a UUID id, text, integers, a double,
/// a date, a boolean, an optional (set and not), an enum, a nested value
/// (JSON), an optional array (JSON), and a timestamp.
final class Specimen: Model, @unchecked Sendable {
    static let schema = "specimens"

    enum Kind: String, Codable, Sendable { case mineral, fossil, plant }

    struct Place: Codable, Equatable, Sendable {
        var site: String
        var depth: Double
        var grid: [Int]
    }

    @ID(key: .id) var id: UUID?
    @Field(key: "name") var name: String
    @Field(key: "count") var count: Int
    @Field(key: "weight") var weight: Double
    @Field(key: "found_at") var foundAt: Date
    @Field(key: "catalogued") var catalogued: Bool
    @OptionalField(key: "note") var note: String?
    @Enum(key: "kind") var kind: Kind
    @Field(key: "place") var place: Place
    @OptionalField(key: "tags") var tags: [String]?
    @Field(key: "rank") var rank: Int64

    init() {}

    init(id: UUID, name: String, count: Int, weight: Double, foundAt: Date, catalogued: Bool, note: String?, kind: Kind,
         place: Place, tags: [String]?, rank: Int64) {
        self.id = id
        self.name = name
        self.count = count
        self.weight = weight
        self.foundAt = foundAt
        self.catalogued = catalogued
        self.note = note
        self.kind = kind
        self.place = place
        self.tags = tags
        self.rank = rank
    }

    /// The fields, as one comparable value.
    var values: Values {
        Values(id: id, name: name, count: count, weight: weight, foundAt: foundAt, catalogued: catalogued, note: note,
               kind: kind, place: place, tags: tags, rank: rank)
    }

    struct Values: Equatable, CustomStringConvertible {
        var id: UUID?, name: String, count: Int, weight: Double, foundAt: Date, catalogued: Bool, note: String?
        var kind: Kind, place: Place, tags: [String]?, rank: Int64
        var description: String { "\(name) (\(id?.uuidString ?? "no id"))" }
    }

    /// What the fixture holds.
    static var expected: [Specimen] {
        [
            Specimen(id: UUID(uuidString: "0E1F2A3B-4C5D-4E6F-8091-A2B3C4D5E6F7")!, name: "quartz", count: 12, weight: 0.125,
                     foundAt: Date(timeIntervalSince1970: 1_600_000_000.5), catalogued: true, note: "clear, from the north face",
                     kind: .mineral, place: Place(site: "Mont Blanc", depth: 2.5, grid: [4, 7]), tags: ["clear", "hexagonal"],
                     rank: Int64.max),
            Specimen(id: UUID(uuidString: "1A2B3C4D-5E6F-4A7B-8C9D-0E1F2A3B4C5D")!, name: "ammonite", count: 1, weight: 3.75,
                     foundAt: Date(timeIntervalSince1970: -86_400.25), catalogued: false, note: nil,
                     kind: .fossil, place: Place(site: "Lyme Regis", depth: 0, grid: []), tags: nil, rank: -3),
            Specimen(id: UUID(uuidString: "2B3C4D5E-6F7A-4B8C-9DAE-BF0A1B2C3D4E")!, name: "fern ✿ «é»", count: 0, weight: -1e-9,
                     foundAt: Date(timeIntervalSince1970: 1_700_000_123.000_001), catalogued: true, note: "",
                     kind: .plant, place: Place(site: "", depth: -12.75, grid: [0]), tags: [], rank: 0),
        ]
    }
}

/// The table as Vapor's SQLite driver makes it.
struct CreateSpecimens: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(Specimen.schema)
            .id()
            .field("name", .string, .required)
            .field("count", .int, .required)
            .field("weight", .double, .required)
            .field("found_at", .datetime, .required)
            .field("catalogued", .bool, .required)
            .field("note", .string)
            .field("kind", .string, .required)
            .field("place", .json, .required)
            .field("tags", .array(of: .string))
            .field("rank", .int64, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(Specimen.schema).delete()
    }
}
