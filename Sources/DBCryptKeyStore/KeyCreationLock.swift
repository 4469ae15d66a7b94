import CPrimitives
import DBCryptCore
import Foundation

/// The lock under which a key is looked for and, when missing, made and
/// kept: no store offers "write only if absent", so two processes racing on
/// a first launch would each keep their own key, the second replacing the
/// first after a database was already made with it. Every process of this
/// user takes the same lock for the same store and item, whatever its
/// environment: an exclusive `flock` on a file in `/run/user/<uid>` (the
/// user's runtime directory), or where there is none in `/tmp/dbcrypt-<uid>`
/// (made 0700 and checked to be this user's own directory). The kernel
/// releases it when the process dies, so a killed process leaves nothing to
/// clean up.
enum KeyCreationLock {
    /// Runs `body` holding the lock for this item of `store`.
    ///
    /// - throws: ``KeyStoreError/unavailable(store:reason:)`` when no lock
    ///   file can be made; what `body` throws.
    static func holding<R>(store: some KeyStore, service: String, account: String, _ body: () throws -> R) throws -> R {
        let directory = try lockDirectory(store: store.name)
        // The item's name may hold any character: the file is named by its hash.
        let identity = Array("\(store.name)\0\(service)\0\(account)".utf8)
        var digest = [UInt8](repeating: 0, count: 32)
        _ = dbcrypt_sha256(identity, identity.count, &digest)
        let path = "\(directory)/key-\(Hex.encode(digest[0..<16])).lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw KeyStoreError.unavailable(store: store.name, reason: "cannot make the lock file \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw KeyStoreError.unavailable(store: store.name, reason: "cannot lock \(path): \(String(cString: strerror(errno)))")
            }
        }
        return try body()
    }

    /// `/run/user/<uid>` when it is this user's private directory, else
    /// `/tmp/dbcrypt-<uid>`, made here when missing and refused unless it is
    /// a real directory of this user that nobody else may enter. Both are
    /// chosen by the user id alone, never by the environment, so that every
    /// process of the user meets in the same place.
    private static func lockDirectory(store: String) throws -> String {
        let runtime = "/run/user/\(getuid())"
        if isPrivateDirectory(runtime) { return runtime }
        let fallback = "/tmp/dbcrypt-\(getuid())"
        if mkdir(fallback, 0o700) != 0 && errno != EEXIST {
            throw KeyStoreError.unavailable(store: store, reason: "cannot make \(fallback): \(String(cString: strerror(errno)))")
        }
        guard isPrivateDirectory(fallback) else {
            throw KeyStoreError.unavailable(store: store, reason: "\(fallback) is not a directory of this user's that only it may enter")
        }
        return fallback
    }

    /// Whether `path` is a directory (not a link) of this user's, closed to others.
    private static func isPrivateDirectory(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR && info.st_uid == getuid() && info.st_mode & 0o077 == 0
    }
}
