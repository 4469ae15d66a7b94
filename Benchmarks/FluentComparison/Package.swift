// swift-tools-version:6.1
// W11: Fluent on DBCryptFluent (encrypted) against Fluent on Vapor's SQLite
// driver, fluent-sqlite-driver 4.9.0 (plaintext), in one run. And the
// interoperability fixture: a database that Vapor's driver writes, and a
// decrypted one it reads back. A package of its own so that DBCrypt's own
// build never resolves fluent-sqlite-driver (whose SQLite is renamed
// sqlite_nio_*, so both link into one binary here).
import PackageDescription

let package = Package(
    name: "FluentComparison",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "DBCrypt", path: "../..", traits: ["Fluent"]),
        .package(url: "https://github.com/vapor/fluent-kit", from: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-sqlite-driver", exact: "4.9.0"),
    ],
    targets: [
        .executableTarget(
            name: "FluentComparison",
            dependencies: [
                .product(name: "DBCrypt", package: "DBCrypt"),
                .product(name: "DBCryptFluent", package: "DBCrypt"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
