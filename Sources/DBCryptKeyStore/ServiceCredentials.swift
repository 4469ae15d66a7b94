import DBCryptCore
import Foundation

/// The credentials systemd gives a service: with `LoadCredential=NAME:PATH`
/// or `LoadCredentialEncrypted=NAME:PATH` in its unit, the key is the file
/// `NAME` in `$CREDENTIALS_DIRECTORY`, readable by the service alone, on
/// memory that is never swapped, decrypted with the machine's TPM or host
/// key where the credential is encrypted. How a server-side Swift service
/// is given its key.
///
/// The directory belongs to one service, so the credential's name is the
/// `account`; `service` is not used. The file holds a key as a key file
/// does (a passphrase, or `x'<hex>'`); one that others may read is refused,
/// one its group may read is not (systemd's own show so). Read-only: the
/// service manager writes credentials, never the service.
///
/// ```swift
/// // [Service]
/// // LoadCredentialEncrypted=notes-key:/etc/credstore.encrypted/notes-key
/// let key = try DatabaseKey.load(from: ServiceCredentials(), service: "", account: "notes-key")
/// ```
///
/// It protects a key from other users and, encrypted, from whoever copies
/// the disk without the machine's TPM; root and the service itself can read it.
public struct ServiceCredentials: KeyStore {
    /// The directory, or nil for `$CREDENTIALS_DIRECTORY` when a key is read.
    public var directory: String?

    /// The credentials in `directory`, or by default in `$CREDENTIALS_DIRECTORY`.
    public init(directory: String? = nil) {
        self.directory = directory
    }

    /// "the service credentials".
    public var name: String { "the service credentials" }

    /// The credential's name: `account`.
    public func itemName(service: String, account: String) -> String { account }

    /// The key in the credential named `account`, or nil when there is no such file.
    ///
    /// - throws: ``KeyStoreError/unavailable(store:reason:)`` when there is
    ///   no credentials directory or the file cannot be read;
    ///   ``KeyStoreError/exposed(path:mode:)`` for a file that other users
    ///   may read or change; ``KeyStoreError/notAKey(store:item:reason:)``.
    public func loadKey(service: String, account: String) throws -> DatabaseKey? {
        let path = try self.path(of: account)
        let file: FileReader
        do throws(FileError) {
            // A FIFO is refused, not waited on; the checks are on what is opened, not on the name.
            file = try FileReader(path: path)
        } catch .notFound {
            return nil
        } catch .isDirectory, .notRegularFile {
            throw KeyStoreError.notAKey(store: name, item: account, reason: "\(path) is not a regular file")
        } catch {
            throw KeyStoreError.unavailable(store: name, reason: "cannot read \(path): \(error.reason)")
        }
        // Others may not read it, nor its group change it. Its group may
        // read it: systemd grants the service's user with an access control
        // list, whose mask shows in the group's bits (0440).
        guard file.permissions & 0o027 == 0 else { throw KeyStoreError.exposed(path: path, mode: file.permissions) }
        // A credential holds at most 1 MiB (systemd's own limit).
        guard file.size <= 1 << 20 else {
            throw KeyStoreError.notAKey(store: name, item: account, reason: "\(path) holds \(file.size) bytes, more than a key")
        }
        let text: SecretBytes
        do throws(FileError) {
            text = try file.readAll(limit: 1 << 20)
        } catch {
            throw KeyStoreError.unavailable(store: name, reason: "cannot read \(path): \(error.reason)")
        }
        // A file cut short meanwhile is not read as a shorter key.
        guard Int64(text.count) == file.size else {
            throw KeyStoreError.unavailable(store: name, reason: "cannot read \(path): it changed while it was read")
        }
        return try text.withUnsafeBytes { try DatabaseKey.stored($0, store: name, item: account) }
    }

    /// Always refused: credentials are written by the service manager.
    ///
    /// - throws: ``KeyStoreError/writeRefused(store:reason:)``.
    public func storeKey(_ key: DatabaseKey, service: String, account: String) throws {
        throw KeyStoreError.writeRefused(store: name, reason: "credentials are read-only: give the key with LoadCredential= in the service's unit")
    }

    /// Always refused: credentials are written by the service manager.
    ///
    /// - throws: ``KeyStoreError/writeRefused(store:reason:)``.
    public func deleteKey(service: String, account: String) throws -> Bool {
        throw KeyStoreError.writeRefused(store: name, reason: "credentials are read-only: remove LoadCredential= from the service's unit")
    }

    /// The credential's file; a name is one file name, never a path.
    private func path(of credential: String) throws -> String {
        guard let directory = directory ?? ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else {
            throw KeyStoreError.unavailable(store: name, reason: "CREDENTIALS_DIRECTORY is not set: this process is not a service given credentials")
        }
        guard !credential.isEmpty, !credential.contains("/"), credential != ".", credential != ".." else {
            throw KeyStoreError.notAKey(store: name, item: credential, reason: "a credential's name is a file name, without /")
        }
        return "\(directory)/\(credential)"
    }
}
