import Foundation

/// The rows of workloads W1 and W2: 3 integers, 2 reals, 3 texts of 20 to 40
/// characters, generated before any timing starts.
struct BenchmarkRows {
    let integers: [(Int64, Int64, Int64)]
    let reals: [(Double, Double)]
    let texts: [(String, String, String)]

    init(count: Int) {
        // A fixed-seed generator: the same rows in every process and round.
        var generator = SplitMix64(seed: 2026)
        func text(_ i: Int, _ salt: Int) -> String {
            let length = 20 + (i * 7 + salt) % 21
            return String(decoding: (0..<length).map { UInt8(97 + ($0 + i + salt) % 26) }, as: UTF8.self)
        }
        integers = (0..<count).map { (Int64($0), Int64.random(in: 0...1_000_000, using: &generator), Int64($0 % 100)) }
        reals = (0..<count).map { (Double($0) / 3, Double.random(in: 0...1, using: &generator)) }
        texts = (0..<count).map { (text($0, 1), text($0, 2), text($0, 3)) }
    }

    var count: Int { integers.count }
}

/// A small deterministic random number generator (SplitMix64).
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

let createTableSQL = "CREATE TABLE item(a INTEGER, b INTEGER, c INTEGER, d REAL, e REAL, f TEXT, g TEXT, h TEXT)"
let insertSQL = "INSERT INTO item VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
