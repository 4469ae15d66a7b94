import Foundation
import TestSupport
import XCTest
@testable import DBCryptSeal

/// The server envelope, Base64(IV ‖ tag ‖ ciphertext), byte for byte, and
/// both ways with Python's `cryptography` (AESGCM), which we did not write.
final class ServerEnvelopeTests: XCTestCase {
    let keyBytes = (0..<32).map { UInt8(($0 * 37 + 11) % 256) }
    var key: SealingKey { try! SealingKey(bytes: keyBytes) }
    var keyBase64: String { Data(keyBytes).base64EncodedString() }

    func testTheLayoutIsIVThenTagThenCiphertext() throws {
        let envelope = ServerEnvelope(key: key)
        let text = try envelope.seal("hello, server")
        let bytes = try XCTUnwrap(Data(base64Encoded: text))
        XCTAssertEqual(bytes.count, 12 + 16 + 13)
        XCTAssertEqual(try envelope.openString(text), "hello, server")
        XCTAssertEqual(try envelope.openString(text + "\n"), "hello, server", "a trailing newline is not part of the Base64")
        XCTAssertNotEqual(try envelope.seal("hello, server"), text, "the IV is drawn for every envelope")
    }

    /// Python seals, we open; we seal, Python opens; with the default
    /// additional data, with another, and with an empty plaintext.
    func testPythonCryptographyOpensOursAndWeOpenItsEnvelopes() throws {
        let plaintexts = ["hello from Swift", "", "ünïcödé ✓ " + String(repeating: "x", count: 3000)]
        for additionalData in ["additional-data", "another context", ""] {
            let envelope = ServerEnvelope(key: key, additionalData: additionalData)
            let ours = try plaintexts.map { try envelope.seal($0) }
            let printed = try runPeer("", key: keyBase64, """
                import base64
                from cryptography.hazmat.primitives.ciphers.aead import AESGCM
                sys.stdout.reconfigure(encoding='utf-8')
                aes = AESGCM(base64.b64decode(key))
                aad = args[0].encode()
                for text in args[1:]:
                    raw = base64.b64decode(text)
                    iv, tag, ct = raw[:12], raw[12:28], raw[28:]
                    print(aes.decrypt(iv, ct + tag, aad).decode())
                for plain in ['hello from Python', '', 'ünïcödé ✓']:
                    iv = os.urandom(12)
                    sealed = aes.encrypt(iv, plain.encode(), aad)
                    print(base64.b64encode(iv + sealed[-16:] + sealed[:-16]).decode())
                """, arguments: [additionalData] + ours)
            let lines = printed.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            XCTAssertEqual(lines.count, 7, printed)
            guard lines.count == 7 else { continue }
            XCTAssertEqual(Array(lines.prefix(3)), plaintexts, "what Python opened")
            XCTAssertEqual(try envelope.openString(lines[3]), "hello from Python")
            XCTAssertEqual(try envelope.openString(lines[4]), "")
            XCTAssertEqual(try envelope.openString(lines[5]), "ünïcödé ✓")
        }
    }

    /// The padded-text key of the client that documents it, computed by
    /// Python from the same text: the two keys open each other's envelopes.
    func testThePaddedTextKeyMatchesTheClientsDerivation() throws {
        for text in ["short key", "exactly-thirty-two-characters!!!", "a text key longer than thirty-two characters"] {
            let envelope = ServerEnvelope(key: try SealingKey(paddedText: text))
            let printed = try runPeer("", key: text, """
                import base64
                from cryptography.hazmat.primitives.ciphers.aead import AESGCM
                padded = key[:32].ljust(32, '0').encode()
                iv = os.urandom(12)
                sealed = AESGCM(padded).encrypt(iv, b'padded', b'additional-data')
                print(base64.b64encode(iv + sealed[-16:] + sealed[:-16]).decode())
                raw = base64.b64decode(args[0])
                print(AESGCM(padded).decrypt(raw[:12], raw[28:] + raw[12:28], b'additional-data').decode())
                """, arguments: [try envelope.seal("from Swift")])
            let lines = printed.split(separator: "\n").map(String.init)
            XCTAssertEqual(lines.count, 2, printed)
            guard lines.count == 2 else { continue }
            XCTAssertEqual(try envelope.openString(lines[0]), "padded")
            XCTAssertEqual(lines[1], "from Swift")
        }
    }

    func testWhatDoesNotOpen() throws {
        let envelope = ServerEnvelope(key: key)
        let text = try envelope.seal("payload")
        let cases: [(String, String, SealError)] = [
            ("not Base64", "%%%not base64%%%", .notBase64),
            ("too short", Data(count: 27).base64EncodedString(), .truncated(byteCount: 27)),
            ("empty", "", .truncated(byteCount: 0)),
        ]
        for (name, input, expected) in cases {
            XCTAssertThrowsError(try envelope.open(input), name) { XCTAssertEqual($0 as? SealError, expected, name) }
        }
        var bytes = try XCTUnwrap(Data(base64Encoded: text))
        for index in bytes.indices {
            bytes[index] ^= 0x01
            XCTAssertThrowsError(try envelope.open(bytes.base64EncodedString()), "byte \(index)") {
                XCTAssertEqual($0 as? SealError, .authenticationFailed)
            }
            bytes[index] ^= 0x01
        }
        XCTAssertThrowsError(try ServerEnvelope(key: .random()).open(text)) { XCTAssertEqual($0 as? SealError, .authenticationFailed) }
        XCTAssertThrowsError(try ServerEnvelope(key: key, additionalData: "other").open(text)) {
            XCTAssertEqual($0 as? SealError, .authenticationFailed)
        }
    }
}
