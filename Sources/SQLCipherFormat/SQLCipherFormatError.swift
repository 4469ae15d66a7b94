/// What can go wrong reading or writing a SQLCipher file without SQLCipher.
/// Each description is one sentence that says what to do next; none holds a key.
public enum SQLCipherFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing at the path.
    case fileNotFound(path: String)
    /// The file exists but cannot be read (permissions, a directory, an I/O error).
    case cannotRead(path: String, reason: String)
    /// A file cannot be created or written (permissions, a full disk).
    case cannotWrite(path: String, reason: String)
    /// The output exists already; nothing was written.
    case destinationExists(path: String)
    /// The file is a plaintext SQLite database, not an encrypted one.
    case notEncrypted(path: String)
    /// The file is shorter than one page of any size: not a database.
    case tooShort(path: String, size: Int64)
    /// The file keeps a plaintext header, so its salt is not in it.
    case saltNeeded(path: String)
    /// No page 1 or 2 authenticates with this key under the settings tried.
    case wrongKey(path: String, triedSettings: String)
    /// A raw key decrypts the pages, but their HMACs fail: the salt given
    /// is not the file's (or the pages were altered).
    case wrongSalt(path: String)
    /// Pages do not authenticate, so the file cannot be converted or decrypted whole.
    case damaged(path: String, pages: [Int])
    /// The file has a `-wal` beside it with frames not yet in the database.
    case unfinishedLog(path: String)
    /// The caller asked to stop; nothing was left behind.
    case cancelled

    /// One sentence saying what happened and what to do next.
    public var description: String {
        switch self {
        case let .fileNotFound(path):
            "No file at \(path): check the path."
        case let .cannotRead(path, reason):
            "Cannot read \(path): \(reason)."
        case let .cannotWrite(path, reason):
            "Cannot write \(path): \(reason); nothing was replaced."
        case let .destinationExists(path):
            "\(path) already exists: choose another output, or remove it first."
        case let .notEncrypted(path):
            "\(path) is a plaintext SQLite database, not an encrypted one: open it with any SQLite."
        case let .tooShort(path, size):
            "\(path) is \(size) bytes, shorter than one database page: it is not a database, or it was cut short."
        case let .saltNeeded(path):
            "\(path) keeps its first bytes in the clear (a plaintext header), so its salt is not in the file: give the salt, or a raw key with its salt."
        case let .wrongKey(path, tried):
            "No page of \(path) authenticates with this key (tried \(tried)): the key is wrong, the file was written with other settings (give them), or its salt (bytes 0-15) is damaged."
        case let .wrongSalt(path):
            "The key decrypts the pages of \(path), but their HMACs do not verify with the salt given: give the salt the file was made with (or its pages were altered)."
        case let .damaged(path, pages):
            "\(path) has \(pages.count) page(s) that do not authenticate (\(Self.list(pages))): run a verification to see them all, or recover what authenticates."
        case let .unfinishedLog(path):
            "\(path) has a -wal file with transactions not yet written into it: open it once with the app or SQLCipher to checkpoint them, then try again."
        case .cancelled:
            "Cancelled; nothing was changed."
        }
    }

    /// "page 3", "pages 1, 7", or the first eight page numbers and how many more.
    public static func list(_ pages: [Int]) -> String {
        PageList.described(pages)
    }
}

extension SQLCipherFormatError: DBCryptError {
    /// What kind of failure this is: ``DBCryptErrorCategory/wrongKey`` when
    /// no page authenticates with the key (or its salt), or the file is no
    /// SQLCipher database; ``DBCryptErrorCategory/damaged`` for pages that do not.
    public var category: DBCryptErrorCategory {
        switch self {
        case .wrongKey, .wrongSalt, .tooShort, .saltNeeded: .wrongKey
        case .damaged: .damaged
        case .fileNotFound: .notFound
        case .destinationExists: .exists
        case .cancelled: .cancelled
        case .cannotRead, .cannotWrite: .storage
        case .notEncrypted, .unfinishedLog: .misuse
        }
    }
}
