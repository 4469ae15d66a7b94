// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "DBCrypt",
    // Mutex and Atomic (the Synchronization module) need these; the system
    // libraries (SQLCipher, OpenSSL, Argon2) come from Homebrew on macOS.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "DBCrypt", targets: ["DBCrypt"]),
        .library(name: "DBCryptSeal", targets: ["DBCryptSeal"]),
        .library(name: "SQLCipherFormat", targets: ["SQLCipherFormat"]),
        .library(name: "DBCryptKeyStore", targets: ["DBCryptKeyStore"]),
        .library(name: "DBCryptS3", targets: ["DBCryptS3"]),
        .executable(name: "dbcrypt", targets: ["dbcrypt"]),
        // Behind the traits of the same names (see `traits`): empty modules without them.
        .library(name: "DBCryptSQLKit", targets: ["DBCryptSQLKit"]),
        .library(name: "DBCryptFluent", targets: ["DBCryptFluent"]),
    ],
    // Integrations with other ecosystems, off by default: a package that
    // enables neither resolves and builds nothing more than DBCrypt's own.
    // A Vapor or Hummingbird app writes
    // `.package(url: "...", from: "...", traits: ["Fluent"])`.
    traits: [
        .trait(name: "SQLKit", description: "DBCryptSQLKit: any DBCrypt writer as an SQLKit SQLDatabase."),
        .trait(name: "Fluent", description: "DBCryptFluent: a Fluent driver on DBCrypt.", enabledTraits: ["SQLKit"]),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/vapor/sql-kit", from: "3.36.0"),
        .package(url: "https://github.com/vapor/fluent-kit", from: "1.57.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
    ],
    targets: [
        // The system's SQLCipher: Debian's libsqlcipher-dev (3.4.1 on Debian 12, 4.6.1 on 13) or Homebrew's sqlcipher (4.x).
        .systemLibrary(
            name: "CSQLCipher",
            pkgConfig: "sqlcipher",
            providers: [.apt(["libsqlcipher-dev"]), .brew(["sqlcipher"])]
        ),
        // OpenSSL's libcrypto through pkg-config: Debian's libssl-dev or Homebrew's openssl@3.
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        // Every cryptographic primitive, with keys set up once, behind one header (on OpenSSL's libcrypto).
        .target(name: "CPrimitives", dependencies: ["COpenSSL"]),
        // What the libraries share, linking no SQLite: the key, secrets, hex, hashes, SQLite's header, the
        // page cipher, the WAL's reader (WAL/), files read without dropping the process's locks.
        .target(name: "DBCryptCore", dependencies: ["CPrimitives"]),
        // Our crypto provider for SQLCipher 3.4.x: the SQLCipher 4 format, on CPrimitives.
        .target(name: "CCipherProvider", dependencies: ["CPrimitives"]),
        // The library: connections, queues, pools, the routines, backups. The `-wal` beside a database is
        // checked with the core's reader of the log before SQLite opens it.
        .target(name: "DBCrypt", dependencies: ["DBCryptCore", "CSQLCipher", "CCipherProvider", "CPrimitives"]),
        // Debian's libargon2-dev (Argon2id, RFC 9106) or Homebrew's argon2.
        .systemLibrary(name: "CArgon2", pkgConfig: "libargon2", providers: [.apt(["libargon2-dev"]), .brew(["argon2"])]),
        // Values sealed one by one (AES-256-GCM), the server envelope, the sealed key-value store.
        .target(
            name: "DBCryptSeal",
            dependencies: [
                "DBCrypt",
                "DBCryptCore",
                "CPrimitives",
                "CArgon2",
            ]
        ),
        // The Secret Service's client library: Debian's libsecret-1-dev or Homebrew's libsecret.
        .systemLibrary(name: "CLibSecret", pkgConfig: "libsecret-1", providers: [.apt(["libsecret-1-dev"]), .brew(["libsecret"])]),
        // The Linux kernel's keyrings: Debian's libkeyutils-dev.
        .systemLibrary(name: "CKeyutils", pkgConfig: "libkeyutils", providers: [.apt(["libkeyutils-dev"])]),
        // Keys kept outside the database: the Secret Service, the kernel keyring, a service's credentials.
        .target(
            name: "DBCryptKeyStore",
            dependencies: ["DBCryptCore", "CPrimitives", "CLibSecret", .target(name: "CKeyutils", condition: .when(platforms: [.linux]))]
        ),
        // Continuous backup to S3-compatible object storage: SigV4 on the core's primitives, HTTP through
        // Foundation's URLSession (FoundationNetworking and the system's libcurl on Linux).
        .target(name: "DBCryptS3", dependencies: ["DBCrypt", "DBCryptCore"]),
        .systemLibrary(name: "CLibEdit", pkgConfig: "libedit", providers: [.apt(["libedit-dev"]), .brew(["libedit"])]),
        // The SQL shell of `dbcrypt shell` and of `dbcrypt sql` reading a script.
        .target(name: "DBCryptShell", dependencies: ["DBCrypt", "DBCryptCore", "DBCryptSeal", "CSQLCipher", "CLibEdit"]),
        // SQLCipher 1-4 files read page by page without SQLCipher: verify, decrypt, plaintext headers, recovery.
        .target(name: "SQLCipherFormat", dependencies: ["DBCryptCore", "CPrimitives"]),
        // Any DBCrypt writer as an SQLKit `SQLDatabase` (trait SQLKit).
        .target(
            name: "DBCryptSQLKit",
            dependencies: [
                "DBCrypt",
                "CSQLCipher",
                .product(name: "SQLKit", package: "sql-kit", condition: .when(traits: ["SQLKit"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["SQLKit"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["SQLKit"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["SQLKit"])),
            ]
        ),
        // The Fluent driver (trait Fluent).
        .target(
            name: "DBCryptFluent",
            dependencies: [
                "DBCrypt",
                "DBCryptSQLKit",
                .product(name: "FluentKit", package: "fluent-kit", condition: .when(traits: ["Fluent"])),
                .product(name: "FluentSQL", package: "fluent-kit", condition: .when(traits: ["Fluent"])),
            ]
        ),
        // The command-line tool.
        .executableTarget(
            name: "dbcrypt",
            dependencies: ["DBCrypt", "DBCryptCore", "DBCryptSeal", "DBCryptKeyStore", "DBCryptS3", "DBCryptShell", "SQLCipherFormat", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // `make bench`: see BENCHMARKS.md.
        .executableTarget(
            name: "DBCryptBenchmarks",
            dependencies: ["DBCrypt", "DBCryptKeyStore", "DBCryptS3", "CSQLCipher", "CCipherProvider", "SQLCipherFormat", "CPrimitives"],
            path: "Benchmarks/DBCryptBenchmarks"
        ),
        // A child process the tests kill mid-way or run under a file-size limit.
        .executableTarget(name: "DBCryptTestHelper", dependencies: ["DBCrypt", "DBCryptS3", "DBCryptSeal", "DBCryptKeyStore", "CSQLCipher"], path: "Tests/DBCryptTestHelper"),
        // What the tests share, each once: keys, database builders, temporary directories and small disks,
        // the one child-process launcher, the kill-campaign driver, the peers, the keyring session, waiting.
        .target(name: "TestFixtures", dependencies: ["DBCrypt"], path: "Tests/TestFixtures"),
        .testTarget(name: "DBCryptTests", dependencies: ["DBCrypt", "SQLCipherFormat", "CPrimitives", "DBCryptTestHelper", "TestFixtures"]),
        .testTarget(
            name: "DBCryptSealTests",
            dependencies: ["DBCryptSeal", "CPrimitives", "DBCryptTestHelper", "TestFixtures"]
        ),
        .testTarget(name: "SQLCipherFormatTests", dependencies: ["SQLCipherFormat", "CPrimitives", "DBCrypt", "TestFixtures"]),
        .testTarget(
            name: "DBCryptKeyStoreTests",
            dependencies: ["DBCryptKeyStore", "DBCrypt", "DBCryptSeal", "SQLCipherFormat", "DBCryptTestHelper", "TestFixtures"]
        ),
        // DBCryptSQLKit against sql-kit's own benchmark suite, and its sessions, values and logs (trait SQLKit).
        .testTarget(
            name: "DBCryptSQLKitTests",
            dependencies: [
                "DBCryptSQLKit", "DBCrypt", "TestFixtures",
                .product(name: "SQLKitBenchmark", package: "sql-kit", condition: .when(traits: ["SQLKit"])),
            ]
        ),
        // DBCryptFluent against fluent-kit's own benchmark suite, and its transactions, errors and logs (trait Fluent).
        .testTarget(
            name: "DBCryptFluentTests",
            dependencies: [
                "DBCryptFluent", "DBCryptSQLKit", "DBCrypt", "TestFixtures", "dbcrypt",
                .product(name: "FluentBenchmark", package: "fluent-kit", condition: .when(traits: ["Fluent"])),
            ],
            exclude: ["Fixtures"]
        ),
        // SigV4 against AWS's published vectors (Vectors/), and S3BackupStorage against the radosgw
        // that scripts/s3-server starts.
        .testTarget(name: "DBCryptS3Tests", dependencies: ["DBCryptS3", "DBCrypt", "DBCryptCore", "TestFixtures"], exclude: ["Vectors"]),
        // End-to-end tests of the built `dbcrypt` binary, run as a child process.
        .testTarget(name: "DBCryptShellTests", dependencies: ["DBCryptShell", "DBCrypt", "DBCryptCore"]),
        .testTarget(name: "dbcryptTests", dependencies: ["dbcrypt", "DBCrypt", "TestFixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
