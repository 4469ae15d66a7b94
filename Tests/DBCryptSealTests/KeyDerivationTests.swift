import Foundation
import TestFixtures
import XCTest
@testable import DBCryptSeal

/// Argon2id, scrypt and PBKDF2-HMAC-SHA256: the RFCs' test vectors, and the
/// same derivations by implementations we did not write (argon2-cffi and
/// Python's hashlib).
final class KeyDerivationTests: XCTestCase {
    private func hex(_ key: DerivedKey) -> String {
        key.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
    }

    private func derive(_ kdf: KeyDerivation, _ password: [UInt8], _ salt: [UInt8], _ count: Int) throws -> String {
        try hex(password.withUnsafeBytes { try kdf.derive($0, salt: salt, byteCount: count) })
    }

    /// RFC 9106, section 5.3 (with its secret and associated data).
    func testArgon2idRFC9106Vector() throws {
        let tag = try [UInt8](repeating: 1, count: 32).withUnsafeBytes { password in
            try KeyDerivation.argon2id(
                password: password, salt: [UInt8](repeating: 2, count: 16), secret: [UInt8](repeating: 3, count: 8),
                associatedData: [UInt8](repeating: 4, count: 12), memoryKiB: 32, iterations: 3, parallelism: 4, byteCount: 32)
        }
        XCTAssertEqual(hex(tag), "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659")
    }

    /// RFC 7914, section 12 (the fourth vector needs 1 GiB and is left out).
    func testScryptRFC7914Vectors() throws {
        XCTAssertEqual(try derive(.scrypt(n: 16, r: 1, p: 1), [], [], 64),
                       "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906")
        XCTAssertEqual(try derive(.scrypt(n: 1024, r: 8, p: 16), Array("password".utf8), Array("NaCl".utf8), 64),
                       "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
        XCTAssertEqual(try derive(.scrypt(n: 16384, r: 8, p: 1), Array("pleaseletmein".utf8), Array("SodiumChloride".utf8), 64),
                       "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887")
    }

    /// RFC 7914, section 11.
    func testPBKDF2SHA256RFC7914Vectors() throws {
        XCTAssertEqual(try derive(.pbkdf2SHA256(iterations: 1), Array("passwd".utf8), Array("salt".utf8), 64),
                       "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783")
        XCTAssertEqual(try derive(.pbkdf2SHA256(iterations: 80_000), Array("Password".utf8), Array("NaCl".utf8), 64),
                       "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d")
    }

    /// The public call, with a passphrase beyond ASCII and a random salt,
    /// against argon2-cffi and hashlib computing the same.
    func testDerivationsMatchArgon2CffiAndHashlib() throws {
        let passphrase = "correct horse ✓ battery staple"
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let saltHex = salt.map { String(format: "%02x", $0) }.joined()
        let kdfs: [KeyDerivation] = [
            .argon2id(memoryKiB: 19 * 1024, iterations: 2, parallelism: 1), .argon2id(memoryKiB: 256, iterations: 1, parallelism: 4),
            .scrypt(n: 1 << 14, r: 8, p: 1), .pbkdf2SHA256(iterations: 100_000),
        ]
        let ours = try kdfs.map { try hex($0.deriveKey(from: passphrase, salt: salt)) }
        let theirs = try runPeer("", key: passphrase, """
            import hashlib
            from argon2.low_level import hash_secret_raw, Type
            salt = bytes.fromhex(args[0])
            secret = key.encode()
            print(hash_secret_raw(secret, salt, time_cost=2, memory_cost=19 * 1024, parallelism=1, hash_len=32, type=Type.ID).hex())
            print(hash_secret_raw(secret, salt, time_cost=1, memory_cost=256, parallelism=4, hash_len=32, type=Type.ID).hex())
            print(hashlib.scrypt(secret, salt=salt, n=1 << 14, r=8, p=1, dklen=32).hex())
            print(hashlib.pbkdf2_hmac('sha256', secret, salt, 100000, 32).hex())
            """, arguments: [saltHex])
        XCTAssertEqual(ours, theirs.split(separator: "\n").map(String.init))
    }

    func testParametersOutOfRangeAreRefusedBeforeAnyWork() throws {
        let refused: [KeyDerivation] = [
            .argon2id(memoryKiB: 2 * 1024 * 1024, iterations: 1, parallelism: 1),
            .argon2id(memoryKiB: 64, iterations: 0, parallelism: 1), .argon2id(memoryKiB: 64, iterations: 1_001, parallelism: 1),
            .argon2id(memoryKiB: 64, iterations: .max, parallelism: 1),
            .argon2id(memoryKiB: 8, iterations: 1, parallelism: 4),
            .argon2id(memoryKiB: 64, iterations: 1, parallelism: 0),
            .scrypt(n: 1000, r: 8, p: 1), .scrypt(n: 1 << 30, r: 8, p: 1), .scrypt(n: 1, r: 8, p: 1), .scrypt(n: 1024, r: 0, p: 1),
            .pbkdf2SHA256(iterations: 0), .pbkdf2SHA256(iterations: -5),
        ]
        for kdf in refused {
            XCTAssertThrowsError(try kdf.deriveKey(from: "p", salt: Data(count: 16)), "\(kdf)") { error in
                guard case .invalidKeyDerivation = error as? SealError else { return XCTFail("\(kdf): \(error)") }
            }
        }
        XCTAssertThrowsError(try KeyDerivation.pbkdf2SHA256(iterations: 1).deriveKey(from: "p", salt: Data(count: 7)))
        XCTAssertThrowsError(try KeyDerivation.pbkdf2SHA256(iterations: 1).deriveKey(from: "p", salt: Data(count: 16), byteCount: 8))
        XCTAssertNoThrow(try KeyDerivation.argon2idDefault.validate())
        XCTAssertNoThrow(try KeyDerivation.scryptDefault.validate())
        XCTAssertNoThrow(try KeyDerivation.pbkdf2SHA256Default.validate())
    }
}
