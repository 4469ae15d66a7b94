// DBCrypt's benchmarks. `make bench` runs them all in release mode; see BENCHMARKS.md.
//
//   DBCryptBenchmarks provider [--rounds N] [--rows N]
//       SQLCipher's stock crypto provider against DBCrypt's, SQLCipher 3
//       against SQLCipher 4: keyed inserts and scans through the raw C API.
//   DBCryptBenchmarks insert-scan [--rounds N] [--rows N]     W1, W2
//   DBCryptBenchmarks overhead [--rounds N] [--rows N]        W1, W2 encrypted over plaintext, against
//       the crypto floor, by page size and page cache size
//   DBCryptBenchmarks open [--rounds N]                         W3
//   DBCryptBenchmarks export [--rounds N] [--rows N]           W4
//   DBCryptBenchmarks pool [--rounds N]                         W6
//   DBCryptBenchmarks backup [--rounds N] [--rows N]           W10
//   DBCryptBenchmarks observe [--rounds N]                      W7
//   DBCryptBenchmarks s3 [--rounds N] [--megabytes N] [--python PATH]   W12: continuous backup to the
//       radosgw of scripts/s3-server (its settings in the environment)
//   DBCryptBenchmarks pages [--rounds N] [--megabytes N]        W9: the page reader
//   DBCryptBenchmarks scale --dbcrypt PATH [--gigabytes 1,2]   migrate, decrypt, check at scale
//   DBCryptBenchmarks measure CONFIG ROWS
//       one measurement in this process (the parent runs each in a child, so
//       that the stock provider is measured in a process that never installed
//       DBCrypt's)
import Foundation

let arguments = CommandLine.arguments
func option(_ name: String, default value: Int) -> Int {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let n = Int(arguments[index + 1]) else {
        return value
    }
    return n
}

switch arguments.dropFirst().first {
case "measure":
    guard arguments.count == 4, let config = ProviderConfiguration(rawValue: arguments[2]), let rows = Int(arguments[3]) else {
        fatalError("usage: DBCryptBenchmarks measure CONFIG ROWS")
    }
    let result = try measure(config, rows: rows)
    print(result.insert, result.scan)
case "provider":
    try runProviderBenchmark(rounds: option("--rounds", default: 5), rows: option("--rows", default: 100_000))
case "open":
    try runOpenBenchmark(rounds: option("--rounds", default: 5))
case "pool":
    try runPoolBenchmark(rounds: option("--rounds", default: 5))
case "observe":
    try await runObservationBenchmark(rounds: option("--rounds", default: 5))
case "backup":
    try runBackupBenchmark(rounds: option("--rounds", default: 3), rows: option("--rows", default: 100_000))
case "s3":
    let python = arguments.firstIndex(of: "--python").map { arguments[$0 + 1] } ?? "python3"
    try runS3BackupBenchmark(rounds: option("--rounds", default: 3), megabytes: option("--megabytes", default: 256), python: python)
case "export":
    try runExportBenchmark(rounds: option("--rounds", default: 3), rows: option("--rows", default: 100_000))
case "profile-insert":
    try runInsertProfile(rows: option("--rows", default: 100_000))
case "profile-scan":
    try runScanProfile(repeats: option("--repeats", default: 20), rows: option("--rows", default: 100_000))
case "pages":
    try runPageReaderBenchmark(rounds: option("--rounds", default: 5), megabytes: option("--megabytes", default: 256))
case "scale":
    guard let index = arguments.firstIndex(of: "--dbcrypt"), index + 1 < arguments.count else {
        fatalError("usage: DBCryptBenchmarks scale --dbcrypt PATH [--gigabytes 1,2]")
    }
    let sizes = arguments.firstIndex(of: "--gigabytes").map { arguments[$0 + 1].split(separator: ",").compactMap { Int($0) } } ?? [1, 2]
    try runScaleBenchmark(gigabytes: sizes, dbcrypt: arguments[index + 1])
case "overhead":
    try runOverheadBenchmark(rounds: option("--rounds", default: 5), rows: option("--rows", default: 100_000))
case "profile-overhead":
    try runOverheadProfile(arguments.count > 2 ? arguments[2] : "encrypted", rows: option("--rows", default: 100_000))
case "records":
    try runRecordBenchmark(rounds: option("--rounds", default: 5), rows: option("--rows", default: 100_000))
case "insert-scan":
    try runInsertScanBenchmark(rounds: option("--rounds", default: 5), rows: option("--rows", default: 100_000))
default:
    FileHandle.standardError.write(Data("usage: DBCryptBenchmarks [provider] [--rounds N] [--rows N]\n".utf8))
    exit(2)
}
