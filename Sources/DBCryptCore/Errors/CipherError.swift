import Foundation

/// A key or cipher setting that cannot be used, found before any file is
/// read or written. Thrown by ``DatabaseKey``'s initializers and by every
/// routine that checks its settings first, in DBCrypt, DBCryptSeal and
/// SQLCipherFormat alike.
public enum CipherError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The key cannot be used: why (never its bytes).
    case invalidKey(reason: String)
    /// A cipher setting is out of range: the pragma that names it, and why.
    case invalidSetting(name: String, reason: String)

    /// One sentence saying what is wrong and what to give instead.
    public var description: String {
        switch self {
        case let .invalidKey(reason): "The key cannot be used: \(reason)."
        case let .invalidSetting(name, reason): "The cipher setting \(name) cannot be used: \(reason)."
        }
    }
}
