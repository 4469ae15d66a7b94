// The one way a test waits for another thread or process: a condition,
// polled, with a deadline. No test sleeps in the hope that something happened.
import Foundation
import XCTest

/// Polls `condition` every `interval` seconds (a millisecond unless told)
/// until it holds, and returns true; or returns false once `timeout` seconds
/// have passed (the caller fails the test: a deadline is a bound on a bug,
/// never a way to wait).
@discardableResult
public func waitUntil(timeout: TimeInterval = 30, every interval: TimeInterval = 0.001,
                      _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return true }
        if Date() >= deadline { return false }
        pause(interval)
    }
}

/// `waitUntil` for async code: yields between polls.
@discardableResult
public func waitUntil(timeout: TimeInterval = 30, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try await condition() { return true }
        if Date() >= deadline { return false }
        await Task.yield()
        pause(0.001)
    }
}

/// Fails the test unless `condition` holds within `timeout` seconds.
public func assertEventually(_ message: @autoclosure () -> String, timeout: TimeInterval = 30,
                             file: StaticString = #filePath, line: UInt = #line, _ condition: () throws -> Bool) rethrows {
    if try !waitUntil(timeout: timeout, condition) { XCTFail("not within \(Int(timeout)) s: \(message())", file: file, line: line) }
}

/// Lets `seconds` pass on purpose: the moment a kill test picks at random,
/// or a pace a test sets for its own writes. Never a wait for another
/// thread or process (``waitUntil(timeout:every:_:)`` is that). With the
/// polls above, the one sleep the tests have: scripts/test checks that no
/// other is written.
public func pause(_ seconds: TimeInterval) { usleep(useconds_t(max(seconds, 0) * 1_000_000)) }
