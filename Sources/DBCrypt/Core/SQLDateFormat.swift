import Foundation

/// Dates as SQLite's date functions write and read them, in UTC, without
/// `DateFormatter` (slow, and locale-dependent when misconfigured). Every
/// input is checked before any arithmetic: bad text reads as nil and a date
/// that cannot be written throws; neither traps.
package enum SQLDateFormat {
    /// The furthest a storable date lies from 1970, in seconds (about 3.17
    /// million years): far enough for any real date, near enough that every
    /// step below stays exact in 64-bit integers and years fit 7 digits.
    static let maximumSeconds: Double = 1e14

    /// `YYYY-MM-DD HH:MM:SS.SSS`, UTC, milliseconds rounded down; other
    /// years with more digits, or a minus sign.
    ///
    /// - throws: ``DatabaseError/invalidArguments(reason:sql:)`` for a date
    ///   that is not finite or lies beyond ``maximumSeconds``.
    static func string(from date: Date) throws -> String {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite, abs(interval) <= maximumSeconds else {
            throw DatabaseError.invalidArguments(
                reason: "a Date must be finite and within 3 million years of 1970 to be stored", sql: nil)
        }
        // Whole milliseconds first, as SQLite counts them, from the nearest
        // microsecond: 0.123 s is 0.12299999... in binary and must not
        // become 122 ms, nor -0.001 s become -2 ms.
        let totalMilliseconds = Int64(((interval * 1_000_000).rounded() / 1000).rounded(.down))
        let (quotient, remainder) = totalMilliseconds.quotientAndRemainder(dividingBy: 1000)
        var seconds = time_t(remainder < 0 ? quotient - 1 : quotient)
        let milliseconds = Int(remainder < 0 ? remainder + 1000 : remainder)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else {
            throw DatabaseError.invalidArguments(reason: "the Date cannot be written as a calendar date", sql: nil)
        }
        let year = Int(parts.tm_year) + 1900
        return (year < 0 ? "-" : "") + pad(abs(year), 4) + "-" + pad(Int(parts.tm_mon) + 1, 2)
            + "-" + pad(Int(parts.tm_mday), 2) + " " + pad(Int(parts.tm_hour), 2) + ":" + pad(Int(parts.tm_min), 2)
            + ":" + pad(Int(parts.tm_sec), 2) + "." + pad(milliseconds, 3)
    }

    /// Parses `YYYY-MM-DD`, optionally followed by ` HH:MM`, `:SS` and a
    /// fraction of any length (`T` may replace the space), then `Z` or an
    /// offset `±HH:MM` (a space may come before it). Years have 4 to 7
    /// digits and an optional sign. Nil for anything else.
    package static func date(from text: String) -> Date? {
        var scanner = Scanner(Array(text.utf8))
        let isNegative = scanner.skip("-")
        if !isNegative { _ = scanner.skip("+") }
        guard let year = scanner.number(digits: 4...7), scanner.skip("-"),
              let month = scanner.number(digits: 2...2), scanner.skip("-"),
              let day = scanner.number(digits: 2...2) else { return nil }
        var hour = 0, minute = 0, second = 0
        var fraction = 0.0
        if scanner.skip(" ") || scanner.skip("T") || scanner.skip("t") {
            guard let h = scanner.number(digits: 2...2), scanner.skip(":"),
                  let m = scanner.number(digits: 2...2) else { return nil }
            hour = h
            minute = m
            if scanner.skip(":") {
                guard let s = scanner.number(digits: 2...2) else { return nil }
                second = s
                if scanner.skip(".") {
                    guard let f = scanner.fraction() else { return nil }
                    fraction = f
                }
            }
        }
        var offsetSeconds = 0
        while scanner.skip(" ") {}
        if scanner.skip("Z") || scanner.skip("z") {
            // UTC
        } else if let sign = scanner.skip("+") ? 1 : scanner.skip("-") ? -1 : nil {
            guard let h = scanner.number(digits: 2...2), scanner.skip(":"),
                  let m = scanner.number(digits: 2...2), h <= 23, m <= 59 else { return nil }
            offsetSeconds = sign * (h * 3600 + m * 60)
        }
        guard scanner.isAtEnd, (1...12).contains(month), (1...31).contains(day), hour <= 23, minute <= 59,
              second <= 60 else { return nil }
        var parts = tm()
        parts.tm_year = Int32((isNegative ? -year : year) - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        // -1 is also one second before 1970: only a different date says it failed.
        if seconds == -1 && !(year == 1969 && month == 12 && day == 31 && !isNegative) { return nil }
        return Date(timeIntervalSince1970: Double(seconds - offsetSeconds) + fraction)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// Reads ASCII text from the front, one token at a time.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { index == bytes.count }

        /// Consumes `character` when it comes next.
        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }

        /// A run of decimal digits whose length is in `digits` (at most 7,
        /// so it cannot overflow), or nil, consuming nothing.
        mutating func number(digits: ClosedRange<Int>) -> Int? {
            var end = index
            while end < bytes.count, end - index < digits.upperBound, (48...57).contains(bytes[end]) { end += 1 }
            guard digits.contains(end - index), end == bytes.count || !(48...57).contains(bytes[end]) else { return nil }
            let value = bytes[index..<end].reduce(0) { $0 * 10 + Int($1 - 48) }
            index = end
            return value
        }

        /// The fraction after a decimal point: one digit or more, of which
        /// the first nine count (nanoseconds), so any length is safe.
        mutating func fraction() -> Double? {
            var value = 0.0, scale = 1.0, count = 0
            while index < bytes.count, (48...57).contains(bytes[index]) {
                if count < 9 {
                    value = value * 10 + Double(bytes[index] - 48)
                    scale *= 10
                }
                count += 1
                index += 1
            }
            return count > 0 ? value / scale : nil
        }
    }
}
