// swift-tools-version:6.1
import PackageDescription

// A Hummingbird 2 server that keeps its notes in an encrypted SQLite file
// through Fluent and DBCrypt's Fluent driver: what `make example` builds
// and drives with curl. DBCrypt is this checkout, with its Fluent trait.
let package = Package(
    name: "NotesServer",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "DBCrypt", path: "../..", traits: ["Fluent"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/vapor/fluent-kit", from: "1.57.0"),
    ],
    targets: [
        .executableTarget(
            name: "NotesServer",
            dependencies: [
                .product(name: "DBCryptFluent", package: "DBCrypt"),
                .product(name: "DBCryptKeyStore", package: "DBCrypt"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
