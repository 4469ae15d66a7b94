#if os(Linux)
import CKeyutils
import DBCryptCore
import Foundation

/// The Linux kernel's key retention service (keyrings): a key kept in the
/// kernel's memory, never on disk, for a login session or for every process
/// of this user, until it is removed or the machine restarts. It suits a
/// command-line tool run many times in one shell.
///
/// A key is a `user` key whose description is `<service>:<account>` and
/// whose payload is the key's text, so
/// `keyctl padd user dbcrypt:app @s < app.key` keeps one that is found
/// here, and `keyctl pipe %user:dbcrypt:app` prints one kept here.
///
/// ```swift
/// let key = try DatabaseKey.loadOrCreate(in: KernelKeyring(), service: "dbcrypt", account: "app")
/// ```
///
/// It protects a key from whoever reads the disk or a backup; every process
/// of this user that can reach the keyring (and root) can read it.
public struct KernelKeyring: KeyStore {
    /// Which keyring new keys are linked into.
    public enum Scope: Sendable {
        /// The session keyring: this login session's processes (`@s`). A
        /// process with no session of its own uses its user's default session keyring.
        case session
        /// The user keyring: every process of this user (`@u`), until the
        /// user's last process ends.
        case user
    }

    /// Which keyring new keys are linked into; keys are looked for in the
    /// session keyring, then the user keyring.
    public var scope: Scope

    /// The kernel keyring, keeping new keys in `scope`.
    public init(scope: Scope = .session) {
        self.scope = scope
    }

    /// "the kernel keyring".
    public var name: String { "the kernel keyring" }

    /// The key whose description is `<service>:<account>`, or nil when
    /// neither the session nor the user keyring holds one.
    ///
    /// - throws: ``KeyStoreError/notAKey(store:item:reason:)`` for a key
    ///   that is not a key's text; ``KeyStoreError/unavailable(store:reason:)``
    ///   when the kernel refuses the search or the read (no keyring support,
    ///   no permission).
    public func loadKey(service: String, account: String) throws -> DatabaseKey? {
        guard let id = try find(service: service, account: account) else { return nil }
        var buffer: UnsafeMutableRawPointer?
        let length = keyctl_read_alloc(id, &buffer)
        guard length >= 0, let buffer else {
            if errno == ENOKEY || errno == EKEYREVOKED || errno == EKEYEXPIRED { return nil }
            throw KeyStoreError.unavailable(store: name, reason: "cannot read the key: \(String(cString: strerror(errno)))")
        }
        defer {
            SecretBytes.wipe(UnsafeMutableRawBufferPointer(start: buffer, count: Int(length)))
            free(buffer)
        }
        return try DatabaseKey.stored(UnsafeRawBufferPointer(start: buffer, count: Int(length)), store: name,
                                      item: itemName(service: service, account: account))
    }

    /// Keeps `key` as a `user` key in the ``scope`` keyring, replacing the
    /// payload of a key with the same description there.
    ///
    /// - throws: ``KeyStoreError/writeRefused(store:reason:)`` when the
    ///   kernel refuses (no write permission on the keyring, quota exceeded).
    public func storeKey(_ key: DatabaseKey, service: String, account: String) throws {
        let ring = try keyring()
        let failure = key.withKeyText { text in
            add_key("user", itemName(service: service, account: account), text.baseAddress, text.count, ring) >= 0 ? 0 : errno
        }
        guard failure == 0 else {
            throw KeyStoreError.writeRefused(store: name, reason: String(cString: strerror(failure)))
        }
    }

    /// Invalidates every key whose description is `<service>:<account>`
    /// that the session and user keyrings reach (a key is gone from every
    /// keyring it is linked into); false when there is none.
    ///
    /// - throws: ``KeyStoreError/writeRefused(store:reason:)`` when the
    ///   kernel refuses.
    public func deleteKey(service: String, account: String) throws -> Bool {
        var removed = false
        // An invalidated key is found no more; the bound is for a kernel that would.
        for _ in 0..<16 {
            guard let id = try find(service: service, account: account) else { break }
            guard keyctl_invalidate(id) == 0 else {
                throw KeyStoreError.writeRefused(store: name, reason: String(cString: strerror(errno)))
            }
            removed = true
        }
        return removed
    }

    /// The key's description, as keyctl shows it: `<service>:<account>`.
    public func itemName(service: String, account: String) -> String { "\(service):\(account)" }

    /// The key's serial number, looked for in the session keyring, then the
    /// user keyring; nil when neither holds it.
    private func find(service: String, account: String) throws -> key_serial_t? {
        let description = itemName(service: service, account: account)
        for ring in [KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING] {
            let id = keyctl_search(ring, "user", description, 0)
            if id >= 0 { return key_serial_t(id) }
            switch errno {
            case ENOKEY, EKEYREVOKED, EKEYEXPIRED: continue
            // Not "missing": a key made now would hide the one not readable.
            case EACCES: throw KeyStoreError.unavailable(store: name, reason: "this process may not search its keyrings")
            case ENOSYS: throw KeyStoreError.unavailable(store: name, reason: "this kernel has no keyrings")
            default: throw KeyStoreError.unavailable(store: name, reason: String(cString: strerror(errno)))
            }
        }
        return nil
    }

    /// The serial number of the ``scope`` keyring. The session keyring is
    /// resolved to the one this process has (or its user's default), so
    /// that a key is never linked only into a new anonymous keyring that
    /// would end with this process.
    private func keyring() throws -> key_serial_t {
        let special = scope == .user ? KEY_SPEC_USER_KEYRING : KEY_SPEC_SESSION_KEYRING
        let id = keyctl_get_keyring_ID(special, 0)
        guard id >= 0 else {
            throw KeyStoreError.unavailable(store: name, reason: "no \(scope == .user ? "user" : "session") keyring: \(String(cString: strerror(errno)))")
        }
        return id
    }
}
#endif
