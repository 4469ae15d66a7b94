import DBCryptCore
import DBCryptSeal
import XCTest

/// Store credentials and sealing keys read from key text, as a key file or
/// an environment variable holds it.
final class KeyTextTests: XCTestCase {
    /// Asserts that `body` throws the SealError `expected`.
    func assertThrows(_ expected: SealError, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertEqual(error as? SealError, expected, file: file, line: line)
        }
    }

    func testACredentialIsAPassphraseOrAKey() throws {
        guard case .passphrase("correct horse") = try StoreCredential(keyText: Array("correct horse\r\n".utf8), source: "s") else {
            return XCTFail("not the passphrase")
        }
        let hex = String(repeating: "ab", count: 32)
        guard case .key(let key) = try StoreCredential(keyText: Array("x'\(hex)'\n".utf8), source: "s") else { return XCTFail("not a key") }
        XCTAssertEqual(key.id, try SealingKey(hex: hex).id)
        // Every spelling a database key option reads, and what a key store holds, is the same key.
        let stored = try DatabaseKey.random()
        let spellings = ["X'\(hex.uppercased())'", "x'\(hex)\(String(repeating: "01", count: 16))'"].map { Array($0.utf8) }
            + [stored.withKeyText { Array($0) }]
        let expected = [try SealingKey(hex: hex).id, try SealingKey(hex: hex).id, try SealingKey(stored).id]
        for (text, id) in zip(spellings, expected) {
            guard case .key(let key) = try StoreCredential(keyText: text, source: "s") else { return XCTFail("not a key: \(text.count) bytes") }
            XCTAssertEqual(key.id, id)
        }
    }

    func testACredentialThatIsNoneIsNamed() throws {
        assertThrows(.emptyPassphrase(source: "the key file k")) { _ = try StoreCredential(keyText: Array("\n".utf8), source: "the key file k") }
        let malformed = "x'" + String(repeating: "zz", count: 32) + "'"
        assertThrows(.malformedKeyText(source: "the key file k")) { _ = try StoreCredential(keyText: Array(malformed.utf8), source: "the key file k") }
        assertThrows(.keyTextNotUTF8(source: "the key file k", what: "passphrase")) {
            _ = try StoreCredential(keyText: [0xFF, 0xFE], source: "the key file k")
        }
        XCTAssertEqual(SealError.emptyPassphrase(source: "the key file k").description, "The passphrase in the key file k is empty.")
        XCTAssertEqual(SealError.malformedKeyText(source: "the key file k").description,
                       "The key in the key file k is malformed: write x' then 64 hex digits (or 96, with a salt) then '.")
        XCTAssertEqual(SealError.keyTextNotUTF8(source: "the key file k", what: "passphrase").description,
                       "The passphrase in the key file k is not UTF-8 text.")
    }

    func testASealingKeyFromText() throws {
        let hex = String(repeating: "0f", count: 32)
        XCTAssertEqual(try SealingKey(keyText: Array((hex + "\n").utf8), source: "s").id, try SealingKey(hex: hex).id)
        XCTAssertEqual(try SealingKey(keyText: Array("short\n".utf8), source: "s", paddedText: true).id, try SealingKey(paddedText: "short").id)
        assertThrows(.keyTextNotUTF8(source: "the key file k", what: "key")) { _ = try SealingKey(keyText: [0xFF], source: "the key file k") }
        XCTAssertThrowsError(try SealingKey(keyText: Array("short".utf8), source: "the key file k")) { error in
            guard case .unusableKeyText(source: "the key file k", let reason)? = error as? SealError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.hasPrefix("invalid key: a key text is 64 hexadecimal digits"), reason)
            XCTAssertEqual((error as? SealError)?.category, .misuse)
            XCTAssertEqual("\(error)", "The key in the key file k is not usable: \(reason)")
        }
    }
}
