import CSQLCipher
import Foundation
import Synchronization

// SQLCipher creates the codec of an ATTACHed database from its process-wide
// defaults (`cipher_default_page_size`, `cipher_default_kdf_iter`, on 4.x
// `cipher_default_hmac_algorithm` and `cipher_default_kdf_algorithm`) and, on
// 3.4.x, from the provider mode selected on the attaching thread; it then
// reads the attached file's schema at once. Left alone, an ATTACH ... KEY
// on SQLCipher 3.4.1 uses SQLCipher 3 settings whatever the connection uses:
// it cannot open the SQLCipher 4 files DBCrypt writes, and creates SQLCipher
// 3 files. So every ATTACH DBCrypt runs sets those defaults to the
// connection's settings for its duration, under one process-wide lock, and
// puts the previous defaults back.

/// Serializes every ATTACH DBCrypt runs: the defaults it sets are process-wide.
private let attachLock = Mutex(())

extension Connection {
    /// Runs `step` (which steps an ATTACH statement) with the connection's
    /// cipher settings, then, when they do not open an existing file, with
    /// the other standard format's. A new (empty) file attached with a key
    /// gets its header and salt at once, as ``Connection/writeHeaderOfNewFile(schema:)``
    /// gives a main database's; when another connection wrote it first, with
    /// another salt, the ATTACH is run once more against that header.
    ///
    /// - throws: what `step` throws with the last settings tried.
    func runAttach(_ step: () throws -> Void) throws {
        defer { forgetInternalStatements() }
        forgetDetachedFiles()
        let before = try attachedSchemas()
        let tried = library.map { attachSettings.toTry(on: $0) } ?? [attachSettings]
        for (index, settings) in tried.enumerated() {
            do {
                try attaching(settings, step)
                break
            } catch let error as DatabaseError where error.resultCode == SQLITE_NOTADB && index < tried.count - 1 {
                continue
            }
        }
        let attached = try attachedSchemas().filter { before[$0.key] == nil }
        // Recorded as the main file is: reading its start (a routine's
        // format check, the page reader) must not drop this connection's locks.
        for (schema, file) in attached {
            guard let id = FileIdentity(file) else { continue }
            OpenFiles.all.add(id)
            attachedFiles[schema] = id
        }
        for schema in attached.keys {
            let name = SQLIdentifier.quoted(schema)
            guard try firstValue("PRAGMA \(name).page_count") == .integer(0) else { continue }
            do {
                try writeHeaderOfNewFile(schema: name)
            } catch is NewFileCreatedMeanwhile {
                try run("DETACH DATABASE \(name)")
                try attaching(attachSettings, step)
            }
        }
    }

    /// Stops holding the files of databases no longer attached (a DETACH),
    /// so that the next connection to one checks its `-wal` as any other.
    func forgetDetachedFiles() {
        guard !attachedFiles.isEmpty, let current = try? attachedSchemas() else { return }
        for (schema, id) in attachedFiles where current[schema] == nil {
            attachedFiles[schema] = nil
            OpenFiles.all.remove(id)
        }
    }

    /// The attached databases (`main` and `temp` aside), by name, with
    /// their files' paths (empty for an in-memory one).
    private func attachedSchemas() throws -> [String: String] {
        var files: [String: String] = [:]
        try Statement.forEach(in: "PRAGMA database_list", on: self) { statement, _ in
            while try statement.step() {
                guard case let .text(name) = statement.value(at: 1), name != "main", name != "temp" else { continue }
                if case let .text(file) = statement.value(at: 2) { files[name] = file } else { files[name] = "" }
            }
        }
        return files
    }

    /// Runs `body`, which attaches a database, so that a codec it creates
    /// uses `settings`: the process-wide defaults of the pragmas
    /// ``CipherSettings/pragmas(on:)`` names and, on 3.4.x, DBCrypt's
    /// provider mode.
    ///
    /// - throws: ``DatabaseError/unsupportedCipherSetting(name:cipherVersion:)``,
    ///   or what `body` throws.
    func attaching<R>(_ settings: CipherSettings, _ body: () throws -> R) throws -> R {
        guard let library else { return try body() }
        // Each pragma's process-wide default: `cipher_page_size` is
        // `cipher_default_page_size`, `kdf_iter` is `cipher_default_kdf_iter`.
        // An attached file has the standard layout: a plaintext header and
        // its salt are the main file's alone.
        var standard = settings
        standard.plaintextHeaderSize = 0
        standard.salt = nil
        let defaults = try standard.pragmas(on: library).map { pragma in
            ("cipher_default_" + pragma.name.replacingOccurrences(of: "cipher_", with: ""), pragma.value)
        }
        // `body`'s value leaves through `result`: `withLock` returns only
        // `sending` values, and it may share a region with `body`.
        var result: R?
        try attachLock.withLock { _ in
            var previous: [(String, String)] = []
            defer {
                for (name, value) in previous.reversed() { try? run("PRAGMA \(name) = \(value)") }
            }
            for (name, value) in defaults {
                // SQLCipher 3.4.1 answers these pragmas with text, 4.x with
                // integers, or names for the algorithms.
                switch try firstValue("PRAGMA \(name)") {
                case let .integer(value)?: previous.append((name, String(value)))
                case let .text(text)? where !text.isEmpty && text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }):
                    previous.append((name, text))
                default: break   // set all the same; nothing to put back
                }
                // Validated integers and fixed names only: no caller text reaches the SQL.
                try run("PRAGMA \(name) = \(value)")
            }
            result = try library.keying(settings.format, body)
        }
        return result!  // set: `withLock` did not throw
    }
}
