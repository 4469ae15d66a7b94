import CPrimitives
import Foundation
import TestFixtures
import XCTest
@testable import DBCryptSeal

/// DBCryptSeal's AES-256-GCM, HMAC-SHA256 and AES-256-CTR (OpenSSL, keys set
/// up once) against Python's `cryptography`, an implementation we did not
/// write, and the nonce source across a fork.
final class CipherPrimitivesTests: XCTestCase {
    let lengths = [0, 1, 15, 16, 17, 100, 4096, 10_007]

    /// Runs `script` with the interop virtualenv's Python, which has
    /// `cryptography`; `cases` reach it as `cases`, a list of lists of bytes
    /// (hexadecimal in transit), and what it prints, one hexadecimal value a
    /// line, comes back.
    private func python(_ script: String, _ cases: [[Data]], file: StaticString = #filePath, line: UInt = #line) throws -> [Data] {
        let input = cases.map { $0.map { $0.map { String(format: "%02x", $0) }.joined() }.joined(separator: " ") }.joined(separator: "\n")
        let path = try makeTemporaryDirectory(self).appendingPathComponent("cases.txt").path
        try Data(input.utf8).write(to: URL(fileURLWithPath: path))
        let printed = try runPeer(path, key: "", """
            cases = [[bytes.fromhex(x) for x in line.split(" ")] if line else [] for line in open(path).read().split("\\n")]
            """ + "\n" + script, file: file, line: line)
        return printed.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { line in
            Data(stride(from: 0, to: line.count, by: 2).map { i -> UInt8 in
                let start = line.index(line.startIndex, offsetBy: i)
                return UInt8(line[start..<line.index(start, offsetBy: 2)], radix: 16)!
            })
        }
    }

    /// Sealed values open with `cryptography`'s AESGCM (additional data: the
    /// 5-byte header, then the context), and values it seals in that form
    /// open with SealingKey.
    func testSealedValuesAreAESGCMAsCryptographyComputesIt() throws {
        let bytes = (0..<32).map { UInt8($0 * 7 & 0xFF) }
        let key = try SealingKey(bytes: bytes, id: 0xA1B2_C3D4)
        var cases: [[Data]] = []
        for length in lengths {
            let plaintext = Data((0..<length).map { UInt8(($0 * 31 + length) & 0xFF) })
            let context = String(repeating: "c", count: length % 70)
            let sealed = try key.seal(plaintext, context: context)
            let ad = Data(sealed.prefix(5)) + Data(context.utf8)
            cases.append([Data(bytes), ad, Data(sealed), plaintext])
        }
        // Each case: key, additional data, our sealed value, its plaintext. Printed: what we sealed, opened; then theirs sealed.
        let printed = try python("""
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
            for key, ad, sealed, plain in cases:
                print(AESGCM(key).decrypt(sealed[5:17], sealed[17:], ad).hex())
                nonce = os.urandom(12)
                print((sealed[:5] + nonce + AESGCM(key).encrypt(nonce, plain, ad)).hex())
            """, cases)
        XCTAssertEqual(printed.count, 2 * cases.count)
        for (index, length) in lengths.enumerated() {
            let plaintext = cases[index][3], context = String(repeating: "c", count: length % 70)
            XCTAssertEqual(printed[2 * index], plaintext, "length \(length)")
            XCTAssertEqual(try key.open(printed[2 * index + 1], context: context), plaintext, "length \(length)")
        }
    }

    /// Server envelopes too, with the default and with other additional data.
    func testEnvelopesAreAESGCMAsCryptographyComputesIt() throws {
        let key = SealingKey.random()
        var cases: [[Data]] = []
        for (length, ad) in zip(lengths, ["", "additional-data", String(repeating: "x", count: 300)].cycled(lengths.count)) {
            let envelope = ServerEnvelope(key: key, additionalData: ad)
            let plaintext = Data((0..<length).map { UInt8($0 & 0xFF) })
            let bytes = Data(base64Encoded: try envelope.seal(plaintext))!
            cases.append([key.secret.withUnsafeBytes { Data($0) }, Data(ad.utf8), bytes, plaintext])
        }
        // Base64(IV ‖ tag ‖ ciphertext): AESGCM takes the ciphertext, then the tag.
        let printed = try python("""
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
            for key, ad, sealed, plain in cases:
                print(AESGCM(key).decrypt(sealed[:12], sealed[28:] + sealed[12:28], ad or None).hex())
            """, cases)
        XCTAssertEqual(printed, cases.map { $0[3] })
    }

    /// The store's lookup tags are HMAC-SHA256, for keys shorter and longer
    /// than SHA-256's block and messages of every length.
    func testLookupTagsAreHMACSHA256AsCryptographyComputesIt() throws {
        var cases: [[Data]] = [], ours: [Data] = []
        for keyLength in [0, 1, 32, 64, 65, 200] {
            let keyBytes = (0..<keyLength).map { UInt8($0 * 13 & 0xFF) }
            let key = keyBytes.withUnsafeBytes { LookupKey($0) }
            for name in ["", "a", "user.1234.token", String(repeating: "é", count: 100)] {
                cases.append([Data(keyBytes), Data(name.utf8)])
                ours.append(try key.tag(name))
            }
        }
        let printed = try python("""
            from cryptography.hazmat.primitives import hashes, hmac
            for case in cases:
                key, name = (case + [b"", b""])[:2] if len(case) < 2 else case
                h = hmac.HMAC(key, hashes.SHA256())
                h.update(name)
                print(h.finalize()[:16].hex())
            """, cases)
        XCTAssertEqual(printed, ours)
    }

    /// Entry names are AES-256-CTR with the 16-byte tag as the counter
    /// block, for counters whose low bytes carry over while a name is
    /// encrypted, and they decrypt back.
    func testSealedNamesAreAESCTRAsCryptographyComputesIt() throws {
        let keyBytes = (0..<32).map { UInt8($0 * 5 & 0xFF) }
        let cipher = keyBytes.withUnsafeBytes { NameCipher($0) }
        let counters = [Data(repeating: 0, count: 16), Data((0..<16).map { UInt8($0 * 17 & 0xFF) }),
                        Data(repeating: 0xAB, count: 8) + Data(repeating: 0xFF, count: 8), Data(repeating: 0xFF, count: 16)]
        var cases: [[Data]] = [], ours: [Data] = []
        for counter in counters {
            for length in lengths {
                let name = Data((0..<length).map { UInt8(($0 * 7 + 3) & 0xFF) })
                let sealed = try cipher.apply(name, tag: counter)
                XCTAssertEqual(try cipher.apply(sealed, tag: counter), name)
                cases.append([Data(keyBytes), counter, name])
                ours.append(sealed)
            }
        }
        let printed = try python("""
            from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
            for case in cases:
                key, counter, name = (case + [b""])[:3]
                encryptor = Cipher(algorithms.AES(key), modes.CTR(counter)).encryptor()
                print((encryptor.update(name) + encryptor.finalize()).hex())
            """, cases)
        XCTAssertEqual(printed, ours)
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
