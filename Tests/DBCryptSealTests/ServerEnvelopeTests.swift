import Foundation
import TestFixtures
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

    /// The GCM specification's Test Case 16 (AES-256, 96-bit IV, additional
    /// data), laid out as the server does.
    func testTheGCMSpecificationVectorOpens() throws {
        func bytes(_ hex: String) -> Data {
            Data(stride(from: 0, to: hex.count, by: 2).map {
                UInt8(hex[hex.index(hex.startIndex, offsetBy: $0)..<hex.index(hex.startIndex, offsetBy: $0 + 2)], radix: 16)!
            })
        }
        let key = try SealingKey(hex: "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
        let iv = bytes("cafebabefacedbaddecaf888")
        let ciphertext = bytes("522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662")
        let tag = bytes("76fc6ece0f4e1768cddf8853bb2d551b")
        let envelope = ServerEnvelope(key: key, additionalData: bytes("feedfacedeadbeeffeedfacedeadbeefabaddad2"))
        XCTAssertEqual(try envelope.open((iv + tag + ciphertext).base64EncodedString()),
                       bytes("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"))
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
