// Skips a test says why, so that the summary of `make test` lists them per
// engine even when tests run in parallel (where XCTest's own output of a
// passing or skipped test is not shown).
import Foundation
import XCTest

/// Skips the test unless `condition` holds: throws XCTSkip with `reason`,
/// and writes "skipped Class.test: reason" to the file DBCRYPT_TEST_SKIPS
/// names, when it is set (scripts/test reads it).
public func skipUnless(_ condition: @autoclosure () throws -> Bool, _ reason: @autoclosure () -> String,
                       function: String = #function, file: String = #fileID) throws {
    guard try !condition() else { return }
    let why = reason()
    recordSkip(why, function: function, file: file)
    throw XCTSkip(why)
}

/// Skips the test if `condition` holds: see ``skipUnless(_:_:function:file:)``.
public func skipIf(_ condition: @autoclosure () throws -> Bool, _ reason: @autoclosure () -> String,
                   function: String = #function, file: String = #fileID) throws {
    try skipUnless(!condition(), reason(), function: function, file: file)
}

/// Appends the skip to DBCRYPT_TEST_SKIPS (one line, atomically: parallel tests share the file).
private func recordSkip(_ reason: String, function: String, file: String) {
    guard let log = ProcessInfo.processInfo.environment["DBCRYPT_TEST_SKIPS"] else { return }
    // One test class per file: the file's name is the class's.
    let testClass = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
    let test = function.prefix { $0 != "(" }
    let line = "skipped \(testClass).\(test): \(reason)\n"
    let fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0o644)
    guard fd >= 0 else { return }
    defer { close(fd) }
    _ = line.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
}
