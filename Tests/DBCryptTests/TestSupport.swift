import Foundation
import XCTest
@testable import DBCrypt
@_exported import TestFixtures

/// Whether `needle` occurs anywhere in the file's bytes.
func file(_ path: String, contains needle: String) throws -> Bool {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return data.range(of: Data(needle.utf8)) != nil
}

/// The first `count` bytes of a file.
func fileHeader(_ path: String, count: Int = 16) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(count))
}
