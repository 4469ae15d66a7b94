import ArgumentParser
import DBCryptKeyStore
import Foundation

/// One key in a key store, as the command line names it:
/// `--keyring SERVICE/ACCOUNT` (the Secret Service), `--kernel-keyring NAME`
/// (the kernel key `dbcrypt:NAME`), `--credential NAME` (the file NAME in
/// `$CREDENTIALS_DIRECTORY`, read-only).
extension KeyStoreItem {
    /// The item one of the three options names (at most one is given), or
    /// nil for none. The options are `--<prefix>keyring`,
    /// `--<prefix>kernel-keyring` and `--<prefix>credential`, as errors name them.
    ///
    /// - throws: `ValidationError` for a name that option does not take.
    init?(keyring: String?, kernelKeyring: String?, credential: String?, prefix: String) throws {
        let options = (keyring: "--\(prefix)keyring", kernel: "--\(prefix)kernel-keyring", credential: "--\(prefix)credential")
        do throws(KeyInputError) {
            if let keyring {
                self = try KeyStoreItem(keyring: keyring, label: "dbcrypt key \(keyring)")
            } else if let kernelKeyring {
                self = try KeyStoreItem(kernelKeyring: kernelKeyring)
            } else if let credential {
                self = try KeyStoreItem(credential: credential)
            } else {
                return nil
            }
        } catch {
            switch error {
            case let .malformedItemName(.secretService, name):
                throw ValidationError("\(options.keyring) takes SERVICE/ACCOUNT (say dbcrypt/app), not \(displayed(name, limit: 64))")
            case .malformedItemName(.kernelKeyring, _):
                throw ValidationError("\(options.kernel) takes a NAME")
            case let .malformedItemName(.credential, name):
                throw ValidationError("\(options.credential) takes the credential's NAME (its file name in $CREDENTIALS_DIRECTORY), not \(displayed(name, limit: 64))")
            case let .itemNameTooLong(kind, name, limit):
                let (option, what) = switch kind {
                case .secretService: (options.keyring, "SERVICE/ACCOUNT")
                case .kernelKeyring: (options.kernel, "NAME")
                case .credential: (options.credential, "NAME (a file name)")
                }
                throw ValidationError("\(option) takes a \(what) of at most \(limit) bytes, not one of \(name.utf8.count): \(displayed(name, limit: 32))")
            case .storeUnsupported:
                throw ValidationError("\(options.kernel): the kernel keyring is Linux's; use \(options.keyring)")
            default:
                throw error
            }
        }
    }

}
