// swift-tools-version:6.1
// W8: the sealed key-value store against the design users bring to us:
// LevelDB, each value sealed with AES-GCM under a PBKDF2 key and stored as
// JSON. A package of its own, so that LevelDB is never linked into DBCrypt.
import PackageDescription

let package = Package(
    name: "SealedStoreComparison",
    dependencies: [
        .package(name: "DBCrypt", path: "../.."),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
    ],
    targets: [
        // Debian's libleveldb-dev (`scripts/bootstrap bench` installs it).
        .systemLibrary(name: "CLevelDB", providers: [.apt(["libleveldb-dev"]), .brew(["leveldb"])]),
        .executableTarget(
            name: "SealedStoreComparison",
            dependencies: [
                "CLevelDB",
                .product(name: "DBCrypt", package: "DBCrypt"),
                .product(name: "DBCryptSeal", package: "DBCrypt"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
