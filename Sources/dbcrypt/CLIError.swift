import DBCrypt

/// A failure the CLI reports in one sentence, with exit status 1 unless said otherwise.
struct CLIError: DBCryptError {
    let description: String
    let category: DBCryptErrorCategory

    /// One sentence for the user; its category sets the exit status (``ExitStatus/of(_:)``).
    init(_ description: String, category: DBCryptErrorCategory = .misuse) {
        self.description = description
        self.category = category
    }
}
