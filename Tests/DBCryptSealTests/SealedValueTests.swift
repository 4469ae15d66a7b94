import Foundation
import XCTest
@testable import DBCryptSeal

/// Sealed values: the binary form, a fresh nonce per seal, and a distinct
/// error for each way opening can fail, on every byte of a sealed value.
final class SealedValueTests: XCTestCase {
    let key = SealingKey.random()

    func testBytesStringsAndCodableValuesComeBack() throws {
        struct Credentials: Codable, Equatable {
            var user: String
            var token: String
            var expires: Date?
        }
        for plaintext in [Data(), Data([0]), Data("a token".utf8), Data((0..<10_000).map { UInt8($0 % 251) })] {
            let sealed = try key.seal(plaintext, context: "c")
            XCTAssertEqual(sealed.count, plaintext.count + 33)
            XCTAssertEqual(try key.open(sealed, context: "c"), plaintext)
        }
        XCTAssertEqual(try key.openString(key.seal("héllo ✓", context: "s"), context: "s"), "héllo ✓")
        let value = Credentials(user: "ada", token: "t0k3n", expires: Date(timeIntervalSince1970: 1_800_000_000))
        let sealed = try key.seal(encoding: value, context: "account 1")
        XCTAssertEqual(try key.open(Credentials.self, from: sealed, context: "account 1"), value)
        XCTAssertNil(sealed.range(of: Data("t0k3n".utf8)), "the plaintext shows in the sealed value")
    }

    func testTheBinaryFormIsVersionKeyIDNonceCiphertextTag() throws {
        let key = try SealingKey(bytes: [UInt8](repeating: 7, count: 32), id: 0x0102_0304)
        let sealed = try key.seal(Data("abc".utf8), context: "")
        XCTAssertEqual(Array(sealed.prefix(5)), [0xD1, 1, 2, 3, 4])
        XCTAssertEqual(sealed.count, 5 + 12 + 3 + 16)
        XCTAssertEqual(SealingKey.random(id: 9).id, 9)
    }

    /// The nonce is drawn by every seal: 20,000 seals of one value under one
    /// key give 20,000 different nonces and ciphertexts.
    func testEverySealHasItsOwnNonce() throws {
        var nonces = Set<Data>(), ciphertexts = Set<Data>()
        for _ in 0..<20_000 {
            let sealed = try key.seal(Data("same".utf8), context: "same")
            nonces.insert(sealed[5..<17])
            ciphertexts.insert(sealed[17...])
        }
        XCTAssertEqual(nonces.count, 20_000)
        XCTAssertEqual(ciphertexts.count, 20_000)
    }

    func testAnotherContextOrKeyDoesNotOpen() throws {
        let sealed = try key.seal("secret", context: "store a, entry token")
        XCTAssertThrowsError(try key.open(sealed, context: "store a, entry other")) {
            XCTAssertEqual($0 as? SealError, .authenticationFailed)
        }
        let other = SealingKey.random()
        XCTAssertThrowsError(try other.open(sealed, context: "store a, entry token")) {
            XCTAssertEqual($0 as? SealError, .wrongKey(sealedWith: key.id, given: [other.id]))
        }
        // Another key that claims the same id: the tag tells.
        let impostor = SealingKey(SealingKey.random().secret, id: key.id)
        XCTAssertThrowsError(try impostor.open(sealed, context: "store a, entry token")) {
            XCTAssertEqual($0 as? SealError, .authenticationFailed)
        }
    }

    /// Every single-bit change anywhere in a sealed value fails to open, with
    /// the error of the part it hit.
    func testEveryBitFlipIsCaughtByThePartItHits() throws {
        let sealed = try key.seal(Data("a sealed value of some length".utf8), context: "ctx")
        for index in sealed.indices {
            for bit in 0..<8 {
                var altered = sealed
                altered[index] ^= 1 << bit
                XCTAssertThrowsError(try key.open(altered, context: "ctx"), "byte \(index) bit \(bit)") { error in
                    let expected: SealError = switch index {
                    case 0: bit < 4 ? .unsupportedVersion(altered[0]) : .notSealed
                    case 1...4: .wrongKey(sealedWith: try! SealedFormat.keyID(of: altered), given: [key.id])
                    default: .authenticationFailed
                    }
                    XCTAssertEqual(error as? SealError, expected, "byte \(index) bit \(bit)")
                }
            }
        }
    }

    func testTruncatedForeignAndFutureValuesHaveTheirOwnErrors() throws {
        let sealed = try key.seal(Data("0123456789".utf8), context: "")
        for length in 0..<sealed.count {
            XCTAssertThrowsError(try key.open(sealed.prefix(length), context: "")) { error in
                XCTAssertEqual(error as? SealError, length < 33 ? .truncated(byteCount: length) : .authenticationFailed, "\(length) bytes")
            }
        }
        XCTAssertThrowsError(try key.open(Data("SQLite format 3\0 and more bytes to be long enough".utf8), context: "")) {
            XCTAssertEqual($0 as? SealError, .notSealed)
        }
        var future = sealed
        future[0] = 0xD2
        XCTAssertThrowsError(try key.open(future, context: "")) {
            XCTAssertEqual($0 as? SealError, .unsupportedVersion(0xD2))
            XCTAssertTrue("\($0)".contains("format version 2"), "\($0)")
        }
    }

    func testOpeningAsTheWrongKindOfValueIsAnError() throws {
        XCTAssertThrowsError(try key.openString(key.seal(Data([0xFF, 0xFE]), context: ""), context: "")) {
            XCTAssertEqual($0 as? SealError, .notUTF8)
        }
        XCTAssertThrowsError(try key.open([Int].self, from: key.seal("not json", context: ""), context: "")) {
            guard case .coding = $0 as? SealError else { return XCTFail("\($0)") }
        }
    }

    func testAKeyringSealsWithTheCurrentKeyAndOpensWithAny() throws {
        let old = SealingKey.random(), new = SealingKey.random()
        let sealedBefore = try old.seal("before", context: "x")
        let ring = try SealingKeySet(current: new, others: [old])
        let sealedAfter = try ring.seal(Data("after".utf8), context: "x")
        XCTAssertEqual(try SealedFormat.keyID(of: sealedAfter), new.id)
        XCTAssertEqual(try ring.open(sealedBefore, context: "x"), Data("before".utf8))
        XCTAssertEqual(try ring.open(sealedAfter, context: "x"), Data("after".utf8))
        let stranger = try SealingKey.random().seal("?", context: "x")
        XCTAssertThrowsError(try ring.open(stranger, context: "x")) {
            guard case .wrongKey(_, let given) = $0 as? SealError else { return XCTFail("\($0)") }
            XCTAssertEqual(Set(given), [old.id, new.id])
        }
        XCTAssertThrowsError(try SealingKeySet(current: new, others: [SealingKey(new.secret, id: new.id)]))
    }

    func testKeysFromBytesAndTextAndWhatTheyRefuse() throws {
        let bytes = (0..<32).map { UInt8($0 * 7 % 256) }
        let reference = try SealingKey(bytes: bytes)
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let base64 = Data(bytes).base64EncodedString()
        for key in [try SealingKey(hex: hex), try SealingKey(hex: hex.uppercased()), try SealingKey(base64: base64),
                    try SealingKey(text: hex), try SealingKey(text: base64)] {
            XCTAssertEqual(key.id, reference.id)
            XCTAssertEqual(try key.open(reference.seal("k", context: ""), context: ""), Data("k".utf8))
        }
        let text32 = "0123456789abcdefghijklmnopqrstuv"
        XCTAssertEqual(try SealingKey(text: text32).id, try SealingKey(bytes: Array(text32.utf8)).id)
        XCTAssertEqual(try SealingKey(paddedText: "short").id, try SealingKey(bytes: Array("short000000000000000000000000000".utf8)).id)
        XCTAssertEqual(try SealingKey(paddedText: text32 + "ignored").id, try SealingKey(bytes: Array(text32.utf8)).id)

        let refused: [() throws -> SealingKey] = [
            { try SealingKey(bytes: [UInt8](repeating: 1, count: 31)) },
            { try SealingKey(bytes: [UInt8](repeating: 1, count: 33)) },
            { try SealingKey(hex: String(hex.dropLast())) },
            { try SealingKey(hex: String(hex.dropLast()) + "g") },
            { try SealingKey(base64: "not base64!") },
            { try SealingKey(base64: Data(bytes.prefix(16)).base64EncodedString()) },
            { try SealingKey(text: "too short") },
            { try SealingKey(paddedText: "é" + String(repeating: "a", count: 31)) },
        ]
        for make in refused {
            XCTAssertThrowsError(try make()) { error in
                guard case .invalidKey(let reason) = error as? SealError else { return XCTFail("\(error)") }
                XCTAssertFalse(reason.contains("0001"), "the key leaks into the error: \(reason)")
            }
        }
        XCTAssertFalse("\(reference)".contains(hex.prefix(8)))
        XCTAssertTrue("\(reference)".contains("redacted"))
    }
}
