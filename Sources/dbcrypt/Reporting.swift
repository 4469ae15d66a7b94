import ArgumentParser
import DBCrypt
import Foundation

/// Exit statuses, as `dbcrypt --help` documents them.
enum ExitStatus {
    static let failure: Int32 = 1
    static let wrongKeyOrNotADatabase: Int32 = 3
    static let damaged: Int32 = 4
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
    } catch let error as SchemaMigrationError {
        printError(error.description)
        throw ExitCode(ExitStatus.failure)
    } catch let error as DatabaseError {
        printError(commandLineDescription(error))
        switch error {
        case .wrongKeyOrNotADatabase: throw ExitCode(ExitStatus.wrongKeyOrNotADatabase)
        case .damaged: throw ExitCode(ExitStatus.damaged)
        case let .sqlite(code, _, _) where code & 0xFF == 11: throw ExitCode(ExitStatus.damaged)   // SQLITE_CORRUPT in a statement
        default: throw ExitCode(ExitStatus.failure)
        }
    } catch {
        printError("\(error)")
        throw ExitCode(ExitStatus.failure)
    }
}

/// The sentence for `error`, where the library's advice names an option
/// the command line spells differently.
func commandLineDescription(_ error: DatabaseError) -> String {
    switch error {
    case let .fileNotFound(path):
        var info = stat()
        if lstat(path, &info) == 0, let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) {
            return "No database at \(path): it is a symbolic link to \(target), which does not exist."
        }
        return "No database at \(path): check the path."
    case let .destinationExists(path):
        return "\(path) already exists: choose another output, or pass --force to replace it."
    case let .hardLinked(path, links):
        return "\(path) has \(links - 1) other name(s) (hard links), which would keep its old content after the change: remove them, or pass --force to accept that."
    default:
        return error.description
    }
}

/// `dbcrypt: message` on stderr, on one line.
func printError(_ message: String) {
    let line = message.split(whereSeparator: \.isNewline).joined(separator: "; ")
    FileHandle.standardError.write(Data("dbcrypt: \(line)\n".utf8))
}

/// Refuses a path that is missing, a directory, or empty, before any key is asked.
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
