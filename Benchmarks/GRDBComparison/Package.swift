// swift-tools-version:6.1
// W5: GRDB against the raw C API on the system's plain SQLite. A package of
// its own so that GRDB's SQLite is never linked with DBCrypt's SQLCipher.
import PackageDescription

let package = Package(
    name: "GRDBComparison",
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "GRDBComparison",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
