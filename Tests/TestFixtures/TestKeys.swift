// The keys of the tests. Deriving a passphrase's key costs 256,000
// iterations of PBKDF2 (about 0.26 s here) at every open; a raw key costs
// nothing. Tests use raw keys unless derivation is what they test
// (the README names those tests).
import DBCrypt
import Foundation

/// Keys that open with no key derivation: raw 32-byte keys. They carry no
/// salt, so each new file gets a random one of its own, as with a
/// passphrase: a wrong salt, another database's log or a plaintext header
/// without its salt fail as they would for an app.
public enum TestKeys {
    /// The key of most tests, as key text (`x'<64 hex digits>'`): what a key
    /// file, an environment variable or a key store holds.
    public static let text = rawKeyText("7e57ab1e")
    /// A second key, for key changes and wrong-key cases.
    public static let otherText = rawKeyText("0dd5ca1e")
    /// A sealed store's key as key text (`x'<64 hex>'`: the store takes no salt).
    public static let storeText = "x'" + String(repeating: "57023e15", count: 8) + "'"
    /// A second store key, for a change of the store's credential.
    public static let otherStoreText = "x'" + String(repeating: "0dd57023", count: 8) + "'"

    /// ``text`` as a key.
    public static var key: DatabaseKey { .passphrase(text) }
    /// ``otherText`` as a key.
    public static var other: DatabaseKey { .passphrase(otherText) }

    /// Each key's hex, in both cases: what no output, argument or error may contain.
    public static let secrets = [text, otherText, storeText, otherStoreText].flatMap { text -> [String] in
        let hex = String(text.dropFirst(2).prefix(64))
        return [hex.prefix(16), hex.uppercased().prefix(16)].map(String.init)
    }

    private static func rawKeyText(_ word: String) -> String { "x'" + String(repeating: word, count: 8) + "'" }
}

extension TestKeys {
    /// ``DatabaseKey/named(_:)`` as key text (`x'<64 hex digits>'`), for a
    /// child process's environment or a peer's `PRAGMA key = "..."`.
    public static func text(named name: String) -> String {
        "x'" + rawKeyBytes(named: name).map { String(format: "%02x", $0) }.joined() + "'"
    }

    /// 32 bytes made from `name` by splitmix64: every name spreads over all of them.
    static func rawKeyBytes(named name: String) -> [UInt8] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for byte in name.utf8 { state = (state ^ UInt64(byte)) &* 0x1000_0000_01B3 }
        var bytes: [UInt8] = []
        while bytes.count < 32 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            bytes += withUnsafeBytes(of: z.littleEndian) { Array($0) }
        }
        return bytes
    }
}

extension DatabaseKey {
    /// A raw key made from `name` (the same name gives the same key, another
    /// name another key): a stand-in for `.passphrase(name)` that costs no
    /// key derivation. Like a passphrase it carries no salt: each new file
    /// gets its own.
    public static func named(_ name: String) -> DatabaseKey {
        try! DatabaseKey(rawKey: TestKeys.rawKeyBytes(named: name))
    }
}
