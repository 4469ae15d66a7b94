import ArgumentParser
import DBCrypt
import DBCryptCore
import DBCryptKeyStore
import DBCryptSeal
import Foundation
import SQLCipherFormat

/// Exit statuses, as `dbcrypt --help` documents them.
enum ExitStatus {
    static let failure: Int32 = 1
    static let wrongKeyOrNotADatabase: Int32 = 3
    static let damaged: Int32 = 4
    static let keyStoreUnavailable: Int32 = 5
    static let keyNotFound: Int32 = 6
    static let notAKey: Int32 = 7

    /// The status for `error`: the one place an error becomes a status. A
    /// wrong key and damage have their own, whichever library said so; a
    /// key store's failures have theirs.
    static func of(_ error: any DBCryptError) -> Int32 {
        switch (error.category, error as? KeyStoreError) {
        case (_, .unavailable?), (_, .locked?): keyStoreUnavailable
        case (_, .notAKey?), (_, .exposed?): notAKey
        case (.notFound, .some): keyNotFound
        case (.wrongKey, _): wrongKeyOrNotADatabase
        case (.damaged, _): damaged
        default: failure
        }
    }
}

/// Exits for an error a command's work threw: one sentence on stderr and
/// its exit status.
func exitFailing(_ error: any Error) -> Never {
    guard let error = error as? any DBCryptError else {
        printError("\(error)")
        exit(ExitStatus.failure)
    }
    printError(commandLineDescription(error))
    exit(ExitStatus.of(error))
}

/// Runs `body`, which uses `database` once it is open: damage met there
/// becomes `DatabaseError.damaged`, naming the file, and a write this user
/// may not make (the file, or a journal in its directory) one sentence that
/// says so.
func namingDamage<T>(of database: String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as DatabaseError {
        switch (error, error.writeRefusal) {
        case let (.sqlite(_, message, _), _) where error.category == .damaged:
            throw DatabaseError.damaged(path: database, reason: message)
        case (_, .readOnlyFile?):
            throw CLIError("Cannot write \(database): this user may only read it (or its directory): nothing was changed.")
        case (_, .noJournalInDirectory?):
            throw CLIError("Cannot write \(database): SQLite cannot make its journal beside it (this user may not write the directory): nothing was changed.")
        default:
            throw error
        }
    }
}

/// The sentence for `error`, where the library's advice names an API the
/// command line spells as an option or a command.
func commandLineDescription(_ error: any DBCryptError) -> String {
    switch error {
    case let DatabaseError.fileNotFound(path):
        missingDatabaseSentence(path)
    case let DatabaseError.databaseInUse(path):
        SQLiteLocks.holder(of: path).map { "\(path) is in use (\($0)): close every program that has it open, then try again." } ?? error.description
    case let DatabaseError.destinationExists(path):
        "\(path) already exists: choose another output, or pass --force to replace it."
    case let DatabaseError.damaged(path, reason) where WriteAheadLogFile.hasFrames(besideDatabaseAt: path):
        "\(path) is damaged (\(reason)), or its write-ahead log \(CompanionFile.wal.path(of: path)) is another database's: nothing was changed; dbcrypt check names the pages and frames."
    case let DatabaseError.damagedWriteAheadLog(path, reason):
        "The write-ahead log \(CompanionFile.wal.path(of: path)) is damaged: \(reason). Nothing was changed: restore it from a backup, or give up those transactions with dbcrypt sql \(path) \"PRAGMA wal_checkpoint(TRUNCATE)\" --accept-wal-loss."
    case let DatabaseError.hardLinked(path, links):
        "\(path) has \(links - 1) other name(s) (hard links), which would keep its old content after the change: remove them, or pass --force to accept that."
    case CipherError.invalidSetting(name: "cipher_salt", _):
        "\(error.description) On the command line, give it with --salt HEX."
    case let BackupError.noBackup(location):
        "\(location) holds no backup: start one with dbcrypt backup continuous."
    case let BackupError.notAReceipt(path):
        "\(path) is not a receipt: give the file dbcrypt backup continuous --receipt wrote."
    case let KeyStoreError.notFound(store, item) where store == ServiceCredentials().name:
        "There is no credential \(item) in $CREDENTIALS_DIRECTORY: give it with LoadCredential=\(item):PATH in the service's unit, or check the name."
    case let KeyStoreError.notFound(store, item):
        "\(store.capitalizedFirst) holds no key named \(item): make one with dbcrypt key create (or let dbcrypt migrate make it), or check the name."
    case let KeyStoreError.alreadyExists(store, item):
        "\(store.capitalizedFirst) already holds a key named \(item): nothing was changed; dbcrypt key delete removes it, if no database uses it."
    default:
        error.description
    }
}

/// Why there is no database at `path`; `createOption` is the option that
/// would make one, for the commands that have it.
func missingDatabaseSentence(_ path: String, createOption: String? = nil) -> String {
    if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) {
        return "No database at \(path): it is a symbolic link to \(target), which does not exist."
    }
    guard let createOption else { return "No database at \(path): check the path." }
    return "No database at \(path): check the path, or pass \(createOption) to make a new one."
}

/// `dbcrypt: message` on stderr, on one line, with whatever it quotes that
/// could drive a terminal escaped (``displayed(_:limit:)``).
func printError(_ message: String) {
    let line = message.split(whereSeparator: \.isNewline).map { displayed(String($0)) }.joined(separator: "; ")
    FileHandle.standardError.write(Data("dbcrypt: \(line)\n".utf8))
}

/// Refuses a path that is missing, a directory, or empty, before any key is
/// asked. A SQLCipher file with a plaintext header is `.notPlaintext`.
func requireDatabaseFile(_ path: String) throws -> FileFormat {
    let format = try FileFormat.detect(at: path)
    switch format {
    case .missing: throw DatabaseError.fileNotFound(path: path)
    case .empty: throw emptyFileError(path)
    default: return format
    }
}

/// An empty file is not a database: exit status 3.
func emptyFileError(_ path: String) -> CLIError {
    CLIError("\(path) is empty: it is not a database.", category: .wrongKey)
}
