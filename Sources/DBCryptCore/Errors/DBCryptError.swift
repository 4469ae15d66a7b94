import Foundation

/// What kind of failure an error is, the same in every DBCrypt module, so
/// that an app handles each kind once, whichever module threw it:
///
/// ```swift
/// do {
///     let pool = try DatabasePool(path: path, key: key)
///     let store = try SealedStore(...)
/// } catch let error as any DBCryptError where error.category == .wrongKey {
///     askForTheKeyAgain()
/// }
/// ```
public enum DBCryptErrorCategory: String, Sendable, Hashable, CaseIterable {
    /// The key (or passphrase, or credential) does not open it, or it is
    /// not what such a key opens (not a database, another store's record).
    case wrongKey
    /// It was opened, but is not as it was written: pages, frames, records
    /// or sealed values that do not authenticate, or a structure broken.
    case damaged
    /// What was named is not there: a file, a key in a store, a commit, a record.
    case notFound
    /// Something is already where a new thing was to go; nothing was replaced.
    case exists
    /// The caller asked to stop; nothing was left half done.
    case cancelled
    /// The system or a store refused or failed: permissions, a full disk,
    /// I/O, a store that is locked or unreachable, a file in use.
    case storage
    /// The API was called in a way it cannot serve: an argument out of
    /// range, a call from the wrong place, a value that does not fit.
    case misuse
    /// The linked SQLCipher, the file's format or this platform cannot do it.
    case unsupported
}

/// An error any DBCrypt module throws: a category an app can handle once,
/// and one sentence (``description``, also `localizedDescription`) that
/// says what happened and what to do next, and never holds a key, a
/// passphrase, a plaintext or a bound value.
public protocol DBCryptError: LocalizedError, CustomStringConvertible, Sendable {
    /// What kind of failure this is.
    var category: DBCryptErrorCategory { get }
}

extension DBCryptError {
    /// The same sentence as ``description``, so `localizedDescription` says it too.
    public var errorDescription: String? { description }
}

extension CipherError: DBCryptError {
    /// ``DBCryptErrorCategory/misuse``: a key or a setting that cannot be used.
    public var category: DBCryptErrorCategory { .misuse }
}
