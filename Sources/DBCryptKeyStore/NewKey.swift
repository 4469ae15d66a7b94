import DBCryptCore

/// A key for data about to be encrypted (a database, a sealed store), and
/// the key store item it was made in for that, if it was: a key made for
/// work that then fails is removed again, so that a failed run leaves no
/// key behind, and a key the data is encrypted with is never removed.
public struct NewKey: Sendable {
    /// The key.
    public let key: DatabaseKey
    /// The item the key was made in now; nil when it was there before, or
    /// came from elsewhere.
    public let madeIn: KeyStoreItem?

    /// A key that was not made in a key store for this work.
    public init(_ key: DatabaseKey) {
        (self.key, madeIn) = (key, nil)
    }

    /// The key kept in `item`, or, where keys may be made there
    /// (``KeyStoreItem/canCreate``), a new random one made now. `note` is
    /// given the item's ``KeyStoreItem/forgottenAtRestartNote`` when a key was made.
    ///
    /// - throws: see ``KeyStoreItem/loadOrCreate()``.
    public init(madeIfMissingIn item: KeyStoreItem, note: (String) -> Void = { _ in }) throws {
        let (key, created) = try item.loadOrCreate()
        if created, let forgotten = item.forgottenAtRestartNote { note(forgotten) }
        (self.key, madeIn) = (key, created ? item : nil)
    }

    /// Runs `body` with the key. When it throws, a key made for this work is
    /// removed from its store again, unless `inUse` says the data is
    /// encrypted with it after all (a failure after the new file was put in
    /// place); `note` is told, in one sentence, what became of the key.
    ///
    /// - throws: what `body` throws; a failure to remove the key is only told to `note`.
    public func using<R>(inUse: (DatabaseKey) -> Bool, note: (String) -> Void, _ body: (DatabaseKey) throws -> R) throws -> R {
        do {
            return try body(key)
        } catch {
            guard let made = madeIn else { throw error }
            if inUse(key) {
                note("The key made for this run stays in \(made.store.name) (\(made.name)): the data is encrypted with it.")
            } else {
                do {
                    try made.delete()
                    note("The key made for this run was removed from \(made.store.name) again (\(made.name)).")
                } catch let failure {
                    note("The key made for this run could not be removed from \(made.store.name) (\(made.name)): \(failure)")
                }
            }
            throw error
        }
    }
}
