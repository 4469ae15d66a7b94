extension DatabaseKey {
    /// Whether data at `path` may be encrypted with this key under `cipher`
    /// (the settings a routine wrote): after a failed routine, whether a key
    /// made for it must stay. An empty or plaintext file holds nothing under
    /// any key; only a key that fails to open the file is known not to be in
    /// use, and any other failure (a busy or damaged file) keeps the key.
    /// Only reads.
    package func mayOpen(_ path: String, cipher: CipherSettings) -> Bool {
        guard (try? FileFormat.detect(at: path)) == .notPlaintext else { return false }
        var options = Database.Options()
        (options.readOnly, options.create, options.cipher) = (true, false, cipher)
        do {
            try Database(path: path, key: self, options: options).close()
            return true
        } catch DatabaseError.wrongKeyOrNotADatabase {
            return false
        } catch {
            return true
        }
    }
}
