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
        printError(error.description)
        switch error {
        case .wrongKeyOrNotADatabase: throw ExitCode(ExitStatus.wrongKeyOrNotADatabase)
        default: throw ExitCode(ExitStatus.failure)
        }
    } catch {
        printError("\(error)")
        throw ExitCode(ExitStatus.failure)
    }
}

/// `dbcrypt: message` on stderr.
func printError(_ message: String) {
    FileHandle.standardError.write(Data("dbcrypt: \(message)\n".utf8))
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
