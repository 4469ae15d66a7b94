// swift-tools-version:6.0
// libFuzzer harnesses for DBCrypt's parsers of untrusted bytes. Built and run by
// `make fuzz` (scripts/fuzz): swift build --sanitize=fuzzer --sanitize=address,
// then each harness for a bounded time on a copy of its seed corpus in Corpus/.
import PackageDescription

let package = Package(
    name: "DBCryptFuzz",
    dependencies: [.package(name: "DBCrypt", path: "..")],
    targets: [
        .executableTarget(name: "FuzzDates", dependencies: [.product(name: "DBCrypt", package: "DBCrypt")]),
        .executableTarget(name: "FuzzKeys", dependencies: [.product(name: "DBCrypt", package: "DBCrypt")]),
        .executableTarget(name: "FuzzFiles", dependencies: [.product(name: "DBCrypt", package: "DBCrypt")]),
        .executableTarget(name: "FuzzSQL", dependencies: [.product(name: "DBCrypt", package: "DBCrypt")]),
        .executableTarget(name: "FuzzPages", dependencies: [.product(name: "SQLCipherFormat", package: "DBCrypt")]),
        .executableTarget(name: "FuzzSeal", dependencies: [
            .product(name: "DBCrypt", package: "DBCrypt"), .product(name: "DBCryptSeal", package: "DBCrypt"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
