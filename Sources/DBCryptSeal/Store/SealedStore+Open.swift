import DBCrypt
import Foundation

extension SealedStore {
    /// Opens the database at `path` and its store `name`, runs `body` with
    /// the store, and closes the database: with SQLite's checkpoint only
    /// when `body` succeeded and committed something
    /// (``DBCrypt/DatabaseQueue/closing(after:)``). A database opened
    /// read-only (`options.readOnly`) that a stopped process left in an
    /// unfinished transaction is rolled back first, where this process
    /// may (``DBCrypt/Database/openReadOnly(path:key:options:rolledBack:)``,
    /// which calls `rolledBack`).
    ///
    /// `initialEntry`, when given, names an entry whose value its `value`
    /// reads once the database is open and before anything else: nothing is
    /// made or changed when it cannot be read. The value is set as the
    /// store's initial write, so that a store this call makes (with
    /// `create`) is never left made but empty.
    ///
    /// `credential` is asked once the store is known to exist (`isNew`
    /// false) or to be made (`isNew` true, with `create`). It gives the
    /// store's credential to `use`, which opens or makes the store and runs
    /// `body`; when `use` fails, `storeExists` says whether the store is in
    /// the database (a key made for a new store that was not made is not in use).
    ///
    /// - throws: ``SealError/noSuchStore(name:)`` when the database has no
    ///   store `name` and `create` is false (no credential is asked), the
    ///   errors of ``init(_:name:credential:create:keyDerivation:initialWrite:)``
    ///   and of the database's opening, and what the closures throw.
    package static func withStore<T>(
        named name: String, inDatabaseAt path: String, key: DatabaseKey?, options: Database.Options,
        create: Bool = false, initialEntry: (name: String, value: () throws -> Data)? = nil, rolledBack: () -> Void = {},
        credential: (_ isNew: Bool, _ storeExists: () -> Bool, _ use: (StoreCredential) throws -> Void) throws -> Void,
        _ body: (SealedStore) throws -> T
    ) throws -> T {
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: path, key: key, options: options)
        } catch DatabaseError.unfinishedTransaction where options.readOnly {
            try Database.openReadOnly(path: path, key: key, options: options, rolledBack: rolledBack).close()
            queue = try DatabaseQueue(path: path, key: key, options: options)
        }
        return try queue.closing {
            let initialWrite = try initialEntry.map { entry in
                let value = try entry.value()
                return { (entries: Entries) in try entries.set(value, for: entry.name) }
            }
            let exists = try exists(name, in: queue)
            guard exists || create else { throw SealError.noSuchStore(name: name) }
            var result: T?
            // Not escaping: `use` runs within `credential`, or not at all.
            try withoutActuallyEscaping(body) { body in
                try credential(!exists, { (try? Self.exists(name, in: queue)) ?? true }) { credential in
                    let store = try SealedStore(queue, name: name, credential: credential, create: create, initialWrite: initialWrite)
                    result = try body(store)
                }
            }
            guard let result else { throw DatabaseError.misuse(reason: "the credential closure of SealedStore.withStore returned without calling use") }
            return result
        }
    }
}
