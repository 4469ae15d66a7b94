import CPrimitives
import Crypto
import CryptoExtras
import Foundation
import XCTest
@testable import DBCryptSeal

/// DBCryptSeal's AES-256-GCM, HMAC-SHA256 and AES-256-CTR (OpenSSL, keys set up once)
/// against swift-crypto's (BoringSSL), an implementation we did not write,
/// and the nonce source across a fork.
final class CipherPrimitivesTests: XCTestCase {
    let lengths = [0, 1, 15, 16, 17, 100, 4096, 10_007]

    /// Sealed values open with swift-crypto's AES.GCM (additional data: the
    /// 5-byte header, then the context), and values swift-crypto seals in
    /// that form open with SealingKey.
    func testSealedValuesAreAESGCMAsSwiftCryptoComputesIt() throws {
        let bytes = (0..<32).map { UInt8($0 * 7 & 0xFF) }
        let key = try SealingKey(bytes: bytes, id: 0xA1B2_C3D4)
        let swiftCryptoKey = SymmetricKey(data: bytes)
        for length in lengths {
            let plaintext = Data((0..<length).map { UInt8(($0 * 31 + length) & 0xFF) })
            let context = String(repeating: "c", count: length % 70)
            let sealed = try key.seal(plaintext, context: context)
            let header = sealed.prefix(5), ad = Data(header) + Data(context.utf8)
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: sealed[5..<17]), ciphertext: sealed[17..<(sealed.count - 16)], tag: sealed.suffix(16))
            XCTAssertEqual(try AES.GCM.open(box, using: swiftCryptoKey, authenticating: ad), plaintext, "length \(length)")

            let theirs = try AES.GCM.seal(plaintext, using: swiftCryptoKey, nonce: AES.GCM.Nonce(), authenticating: ad)
            let theirSealed = Data(header) + Data(theirs.nonce) + theirs.ciphertext + theirs.tag
            XCTAssertEqual(try key.open(theirSealed, context: context), plaintext, "length \(length)")
        }
    }

    /// Server envelopes too, with the default and with other additional data.
    func testEnvelopesAreAESGCMAsSwiftCryptoComputesIt() throws {
        let key = SealingKey.random()
        for (length, ad) in zip(lengths, ["", "additional-data", String(repeating: "x", count: 300)].cycled(lengths.count)) {
            let envelope = ServerEnvelope(key: key, additionalData: ad)
            let plaintext = Data((0..<length).map { UInt8($0 & 0xFF) })
            let bytes = Data(base64Encoded: try envelope.seal(plaintext))!
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: bytes.prefix(12)), ciphertext: bytes.dropFirst(28), tag: bytes[12..<28])
            XCTAssertEqual(try AES.GCM.open(box, using: key.symmetricKey, authenticating: Data(ad.utf8)), plaintext)
        }
    }

    /// The store's lookup tags are HMAC-SHA256, for keys shorter and longer
    /// than SHA-256's block and messages of every length.
    func testLookupTagsAreHMACSHA256AsSwiftCryptoComputesIt() throws {
        for keyLength in [0, 1, 32, 64, 65, 200] {
            let keyBytes = (0..<keyLength).map { UInt8($0 * 13 & 0xFF) }
            let key = keyBytes.withUnsafeBytes { LookupKey($0) }
            for name in ["", "a", "user.1234.token", String(repeating: "é", count: 100)] {
                let expected = Data(HMAC<SHA256>.authenticationCode(for: Data(name.utf8), using: SymmetricKey(data: keyBytes)))
                XCTAssertEqual(try key.tag(name), expected.prefix(16), "key of \(keyLength) bytes, name \(name.count) characters")
            }
        }
    }

    /// Entry names are AES-256-CTR with the 16-byte tag as the counter
    /// block, for counters whose low bytes carry over while a name is
    /// encrypted, and they decrypt back.
    func testSealedNamesAreAESCTRAsSwiftCryptoComputesIt() throws {
        let keyBytes = (0..<32).map { UInt8($0 * 5 & 0xFF) }
        let cipher = keyBytes.withUnsafeBytes { NameCipher($0) }
        let counters = [Data(repeating: 0, count: 16), Data((0..<16).map { UInt8($0 * 17 & 0xFF) }),
                        Data(repeating: 0xAB, count: 8) + Data(repeating: 0xFF, count: 8), Data(repeating: 0xFF, count: 16)]
        for counter in counters {
            for length in lengths {
                let name = Data((0..<length).map { UInt8(($0 * 7 + 3) & 0xFF) })
                let sealed = try cipher.apply(name, tag: counter)
                let expected = try AES._CTR.encrypt(name, using: SymmetricKey(data: keyBytes), nonce: AES._CTR.Nonce(nonceBytes: counter))
                XCTAssertEqual(sealed, expected, "counter \(counter.map { String($0, radix: 16) }), length \(length)")
                XCTAssertEqual(try cipher.apply(sealed, tag: counter), name)
            }
        }
        XCTAssertThrowsError(try cipher.apply(Data("name".utf8), tag: Data(count: 12))) {
            guard case .storeDamaged = $0 as? SealError else { return XCTFail("\($0)") }
        }
    }

    /// Slices, arrays and bytes in several pieces seal and open alike.
    func testInputsOfEveryShape() throws {
        let key = SealingKey.random()
        let whole = Data((0..<300).map { UInt8($0 & 0xFF) })
        let sealed = try key.seal(whole, context: "c")
        let slice = (Data([9, 9, 9]) + sealed)[3...]
        XCTAssertNotEqual(slice.startIndex, 0)
        XCTAssertEqual(try key.open(slice, context: "c"), whole)
        XCTAssertEqual(try key.open(Array(sealed), context: "c"), whole)
        var pieces = DispatchData.empty
        for chunk in stride(from: 0, to: sealed.count, by: 100) {
            sealed[chunk..<min(chunk + 100, sealed.count)].withUnsafeBytes { pieces.append($0) }
        }
        XCTAssertGreaterThan(pieces.regions.count, 1)
        XCTAssertEqual(try key.open(pieces, context: "c"), whole)
        XCTAssertEqual(try key.open(key.seal(whole[100...], context: "c"), context: "c"), whole[100...])
    }

    /// A forked child draws other nonces than its parent, although it starts
    /// with a copy of the parent's memory (the buffered random bytes live in
    /// a page the kernel wipes in the child).
    func testAForkedChildDrawsOtherNonces() throws {
        var first = [UInt8](repeating: 0, count: 12)
        XCTAssertEqual(dbcrypt_random_bytes(&first, 12), 1)  // the buffer is filled now
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let child = fork()
        if child == 0 {
            var nonce = [UInt8](repeating: 0, count: 12)
            _ = dbcrypt_random_bytes(&nonce, 12)
            _ = write(fds[1], nonce, 12)
            _exit(0)
        }
        XCTAssertGreaterThan(child, 0)
        close(fds[1])
        var parent = [UInt8](repeating: 0, count: 12), fromChild = [UInt8](repeating: 0, count: 12)
        XCTAssertEqual(dbcrypt_random_bytes(&parent, 12), 1)
        XCTAssertEqual(read(fds[0], &fromChild, 12), 12)
        close(fds[0])
        var status: Int32 = 0
        waitpid(child, &status, 0)
        XCTAssertNotEqual(parent, fromChild, "the child handed out the parent's next nonce")
        XCTAssertNotEqual(first, parent)
    }
}

private extension Array {
    func cycled(_ count: Int) -> [Element] { (0..<count).map { self[$0 % self.count] } }
}
