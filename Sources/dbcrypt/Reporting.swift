import ArgumentParser
import DBCrypt
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
}

/// Runs a command's work, turning every error into one sentence on stderr
/// and its exit status.
func reportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as ExitCode {
        throw error
    } catch let error as ValidationError {
        throw error
    } catch let error as CLIError {
        printError(error.description)
        throw ExitCode(error.status)
    } catch let error as KeyStoreError {
        printError(commandLineDescription(error))
        switch error {
        case .unavailable, .locked: throw ExitCode(ExitStatus.keyStoreUnavailable)
        case .notFound: throw ExitCode(ExitStatus.keyNotFound)
        case .notAKey, .exposed: throw ExitCode(ExitStatus.notAKey)
        case .alreadyExists, .writeRefused: throw ExitCode(ExitStatus.failure)
        }
    } catch let error as SchemaMigrationError {
        printError(error.description)
        throw ExitCode(ExitStatus.failure)
    } catch let error as SQLCipherFormatError {
        printError(error.description)
        throw ExitCode(exitStatus(error))
    } catch let error as CipherError {
        // The library's advice names its own API; the command line has --salt.
        printError(error.description.replacingOccurrences(of: "in CipherSettings.salt", with: "with --salt HEX"))
        throw ExitCode(ExitStatus.failure)
    } catch let error as SealError {
        printError(error.description)
        switch error {
        case .wrongCredential, .wrongKey: throw ExitCode(ExitStatus.wrongKeyOrNotADatabase)
        // A value altered in the file is damage, as an altered name is.
        case .storeDamaged, .authenticationFailed: throw ExitCode(ExitStatus.damaged)
        default: throw ExitCode(ExitStatus.failure)
        }
    } catch let error as BackupError {
        printError(error.description)
        switch error {
        case .wrongKey: throw ExitCode(ExitStatus.wrongKeyOrNotADatabase)
        case .damaged, .notAsExpected: throw ExitCode(ExitStatus.damaged)
        default: throw ExitCode(ExitStatus.failure)
        }
    } catch let error as DatabaseError {
        printError(commandLineDescription(error))
        switch error {
        case .wrongKeyOrNotADatabase: throw ExitCode(ExitStatus.wrongKeyOrNotADatabase)
        case _ where isDamage(error): throw ExitCode(ExitStatus.damaged)
        default: throw ExitCode(ExitStatus.failure)
        }
    } catch {
        printError("\(error)")
        throw ExitCode(ExitStatus.failure)
    }
}

/// Whether `error` says that an opened database is damaged: SQLite found it
/// malformed (SQLITE_CORRUPT), or a page of it does not decrypt (SQLITE_NOTADB
/// after the first page did).
func isDamage(_ error: DatabaseError) -> Bool {
    switch error {
    case .damaged, .damagedWriteAheadLog, .writeAheadLogDoesNotDecrypt: true
    case let .sqlite(code, _, _): [11, 26].contains(code & 0xFF)
    default: false
    }
}

/// SQLITE_READONLY_DIRECTORY: SQLite 3.22 and later's answer when it cannot
/// make a journal in the directory (3.15 answers SQLITE_CANTOPEN).
private let readOnlyDirectory: Int32 = 8 | (6 << 8)

/// Runs `body`, which uses `database` once it is open: damage met there
/// becomes `DatabaseError.damaged`, naming the file, and a write this user
/// may not make (the file, or a journal in its directory) one sentence that
/// says so.
func namingDamage<T>(of database: String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let DatabaseError.sqlite(code, message, _) where isDamage(.sqlite(code: code, message: message, sql: nil)) {
        throw DatabaseError.damaged(path: database, reason: message)
    } catch let DatabaseError.sqlite(code, _, _) where code & 0xFF == 8 && code != readOnlyDirectory {
        throw CLIError("Cannot write \(database): this user may only read it (or its directory): nothing was changed.")
    } catch let DatabaseError.sqlite(code, _, _) where code & 0xFF == 14 || code == readOnlyDirectory {
        throw CLIError("Cannot write \(database): SQLite cannot make its journal beside it (this user may not write the directory): nothing was changed.")
    }
}

/// The sentence for `error`, where the library's advice names an option
/// the command line spells differently.
func commandLineDescription(_ error: DatabaseError) -> String {
    switch error {
    case let .fileNotFound(path):
        return missingDatabaseSentence(path)
    case let .destinationExists(path):
        return "\(path) already exists: choose another output, or pass --force to replace it."
    case let .damaged(path, reason) where LogState(path).hasFrames:
        return "\(path) is damaged (\(reason)), or its write-ahead log \(path)-wal is another database's: nothing was changed; dbcrypt check names the pages and frames."
    case let .damagedWriteAheadLog(path, reason):
        return "The write-ahead log \(path)-wal is damaged: \(reason). Nothing was changed: restore it from a backup, or give up those transactions with dbcrypt sql \(path) \"PRAGMA wal_checkpoint(TRUNCATE)\" --accept-wal-loss."
    case let .hardLinked(path, links):
        return "\(path) has \(links - 1) other name(s) (hard links), which would keep its old content after the change: remove them, or pass --force to accept that."
    default:
        return error.description
    }
}

/// The sentence for `error`, naming the command that makes a missing key.
func commandLineDescription(_ error: KeyStoreError) -> String {
    switch error {
    case let .notFound(store, item) where store == ServiceCredentials().name:
        return "There is no credential \(item) in $CREDENTIALS_DIRECTORY: give it with LoadCredential=\(item):PATH in the service's unit, or check the name."
    case let .notFound(store, item):
        return "\(store.capitalizedFirst) holds no key named \(item): make one with dbcrypt key create (or let dbcrypt migrate make it), or check the name."
    case let .alreadyExists(store, item):
        return "\(store.capitalizedFirst) already holds a key named \(item): nothing was changed; dbcrypt key delete removes it, if no database uses it."
    default:
        return error.description
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
    CLIError("\(path) is empty: it is not a database.", status: ExitStatus.wrongKeyOrNotADatabase)
}
