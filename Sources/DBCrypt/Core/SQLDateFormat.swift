import Foundation

/// Dates as SQLite's date functions write and read them, in UTC, without
/// `DateFormatter` (slow, and locale-dependent when misconfigured).
enum SQLDateFormat {
    /// `YYYY-MM-DD HH:MM:SS.SSS`, UTC, milliseconds rounded down.
    static func string(from date: Date) -> String {
        let totalMilliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        var seconds = time_t((totalMilliseconds / 1000).rounded(.down))
        let milliseconds = Int(totalMilliseconds - Double(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return pad(Int(parts.tm_year) + 1900, 4) + "-" + pad(Int(parts.tm_mon) + 1, 2) + "-" + pad(Int(parts.tm_mday), 2)
            + " " + pad(Int(parts.tm_hour), 2) + ":" + pad(Int(parts.tm_min), 2) + ":" + pad(Int(parts.tm_sec), 2)
            + "." + pad(milliseconds, 3)
    }

    /// Parses `YYYY-MM-DD`, `YYYY-MM-DD HH:MM`, `YYYY-MM-DD HH:MM:SS` and
    /// `YYYY-MM-DD HH:MM:SS.SSS` (a `T` may replace the space; a trailing `Z`
    /// is allowed), read as UTC. Nil for anything else.
    static func date(from text: String) -> Date? {
        var bytes = Array(text.utf8)
        if bytes.last == UInt8(ascii: "Z") { bytes.removeLast() }
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for b in bytes[range] {
                guard b >= 48 && b <= 57 else { return nil }
                value = value * 10 + Int(b - 48)
            }
            return value
        }
        func byte(_ i: Int, is c: Character) -> Bool { i < bytes.count && bytes[i] == c.asciiValue! }

        guard bytes.count >= 10, let year = number(0..<4), byte(4, is: "-"),
              let month = number(5..<7), byte(7, is: "-"), let day = number(8..<10) else { return nil }
        var hour = 0, minute = 0, second = 0
        var fraction = 0.0
        if bytes.count > 10 {
            guard byte(10, is: " ") || byte(10, is: "T"),
                  let h = number(11..<13), byte(13, is: ":"), let m = number(14..<16) else { return nil }
            hour = h; minute = m
            var end = 16
            if bytes.count > 16 {
                guard byte(16, is: ":"), let s = number(17..<19) else { return nil }
                second = s; end = 19
                if bytes.count > 19 {
                    guard byte(19, is: "."), bytes.count > 20, let f = number(20..<bytes.count) else { return nil }
                    fraction = Double(f) / pow(10, Double(bytes.count - 20))
                    end = bytes.count
                }
            }
            guard end == bytes.count else { return nil }
        }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        return Date(timeIntervalSince1970: Double(timegm(&parts)) + fraction)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
