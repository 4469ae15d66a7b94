import DBCrypt
import Foundation

/// A JSON value, written by hand so that key order is kept and no
/// Foundation JSON quirks (escaped slashes) appear.
indirect enum JSONValue {
    case null
    case bool(Bool)
    case number(Double)
    case integer(Int64)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    init(_ value: DatabaseValue) {
        switch value {
        case .null: self = .null
        case let .integer(v): self = .integer(v)
        case let .real(d): self = .number(d)
        case let .text(s): self = .string(s)
        case let .blob(d): self = .string(d.base64EncodedString())
        }
    }

    var encoded: String {
        switch self {
        case .null: return "null"
        case let .bool(b): return b ? "true" : "false"
        case let .integer(v): return String(v)
        case let .number(d): return d.isFinite ? (d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)) : "null"
        case let .string(s): return Self.quote(s)
        case let .array(values): return "[" + values.map(\.encoded).joined(separator: ",") + "]"
        case let .object(members): return "{" + members.map { Self.quote($0) + ":" + $1.encoded }.joined(separator: ",") + "}"
        }
    }

    /// The value as plain text, for the non-JSON output.
    var plain: String {
        switch self {
        case let .string(s): return s
        default: return encoded
        }
    }

    private static func quote(_ s: String) -> String {
        "\"" + escaped(s) + "\""
    }

    /// `s` as the inside of a JSON string, on one line: quotes, backslashes
    /// and whatever could drive a terminal (``Unicode/Scalar/drivesTheTerminal``)
    /// escaped, so that no two strings print alike and none reorders the
    /// line (`kv list` prints names this way).
    static func escaped(_ s: String) -> String {
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.drivesTheTerminal:
                out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
