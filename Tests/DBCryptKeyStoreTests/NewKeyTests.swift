#if os(Linux)
import DBCrypt
import DBCryptKeyStore
import Foundation
import XCTest

/// A key made in a store for work that fails is removed again, unless the
/// data is encrypted with it; the kernel keyring is the real store here.
final class NewKeyTests: XCTestCase {
    func testAKeyMadeForFailedWorkIsRemovedUnlessTheDataUsesIt() throws {
        let item = try KeyStoreItem(kernelKeyring: "new-key-test-\(UUID().uuidString)")
        defer { try? item.delete() }
        struct Failed: Error {}
        var notes: [String] = []

        let made = try NewKey(madeIfMissingIn: item) { notes.append($0) }
        XCTAssertNotNil(made.madeIn)
        XCTAssertEqual(notes.count, 1, "the kernel keyring forgets at restart")
        XCTAssertThrowsError(try made.using(inUse: { _ in false }, note: { notes.append($0) }) { _ in throw Failed() }) { error in
            XCTAssertTrue(error is Failed, "\(error)")
        }
        XCTAssertTrue(notes.last?.contains("was removed from") ?? false, "\(notes)")
        XCTAssertThrowsError(try item.load()) { XCTAssertEqual(($0 as? any DBCryptError)?.category, .notFound) }

        // Made again, and the data is encrypted with it: it stays.
        let kept = try NewKey(madeIfMissingIn: item)
        XCTAssertThrowsError(try kept.using(inUse: { _ in true }, note: { notes.append($0) }) { _ in throw Failed() })
        XCTAssertTrue(notes.last?.contains("stays in") ?? false, "\(notes)")
        XCTAssertEqual(try item.load().withKeyText { Array($0) }, kept.key.withKeyText { Array($0) })

        // Found there now, not made: a failure removes nothing and says nothing.
        let found = try NewKey(madeIfMissingIn: item)
        XCTAssertNil(found.madeIn)
        let count = notes.count
        XCTAssertThrowsError(try found.using(inUse: { _ in false }, note: { notes.append($0) }) { _ in throw Failed() })
        XCTAssertEqual(notes.count, count)
        XCTAssertNoThrow(try item.load())
        XCTAssertEqual(try found.using(inUse: { _ in false }, note: { notes.append($0) }) { _ in 7 }, 7)
    }
}
#endif
