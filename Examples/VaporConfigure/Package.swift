// swift-tools-version:6.1
import PackageDescription

// The README's Vapor configure.swift, compiled (`make vapor-example`; Vapor
// takes about 8 minutes to build here, so make test does not build it).
let package = Package(
    name: "VaporConfigure",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "DBCrypt", path: "../..", traits: ["Fluent"]),
        .package(url: "https://github.com/vapor/vapor", from: "4.122.0"),
        .package(url: "https://github.com/vapor/fluent", from: "4.13.0"),
    ],
    targets: [
        .executableTarget(
            name: "App",
            dependencies: [
                .product(name: "DBCryptFluent", package: "DBCrypt"),
                .product(name: "DBCryptKeyStore", package: "DBCrypt"),
                .product(name: "Fluent", package: "fluent"),
                .product(name: "Vapor", package: "vapor"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
