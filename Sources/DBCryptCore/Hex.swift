/// Hexadecimal text of bytes, and back: raw keys (`x'<hex>'`), key files,
/// checksums, the CLI's output.
package enum Hex {
    /// The bytes as hex digits, two per byte.
    package static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digit(byte >> 4, uppercase: uppercase))
            text.append(digit(byte & 0xF, uppercase: uppercase))
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Writes `byte`'s two hex digits at `index` of `text`, in place: for
    /// text that is itself a secret, made in ``SecretBytes``.
    package static func write(_ byte: UInt8, into text: UnsafeMutableRawBufferPointer, at index: Int, uppercase: Bool) {
        text[index] = digit(byte >> 4, uppercase: uppercase)
        text[index + 1] = digit(byte & 0xF, uppercase: uppercase)
    }

    /// The hex digit of `nibble` (0 to 15).
    private static func digit(_ nibble: UInt8, uppercase: Bool) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : (uppercase ? UInt8(ascii: "A") : UInt8(ascii: "a")) + nibble - 10
    }

    /// The bytes that the UTF-8 hex digits `text` spell (either case), or
    /// nil when it holds an odd number of characters or anything but hex
    /// digits. A secret decoded here should be wiped by the caller
    /// (``SecretBytes/wipe(_:)-(inout [UInt8])``).
    package static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var high: UInt8?
        for character in text {
            guard let value = value(of: character) else {
                SecretBytes.wipe(&bytes)
                return nil
            }
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return bytes
    }

    /// ``decode(_:)-(some Collection<UInt8>)`` of text.
    package static func decode(_ text: String) -> [UInt8]? { decode(Array(text.utf8)) }

    /// The value of one hex digit, or nil.
    private static func value(of c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
