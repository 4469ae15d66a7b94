extension EncryptedDatabaseFile {
    /// Writes the database as a plaintext SQLite file that any SQLite reads:
    /// every page decrypted and authenticated, the transactions committed in
    /// the `-wal` beside it applied (as SQLite would read them), the header
    /// restored and set to rollback-journal mode. Pages keep SQLCipher's
    /// reserved bytes (zeroed), which SQLite reads as it reads any reserve.
    ///
    /// `output` must not exist, or be empty; it is created with mode 0600 and
    /// flushed to disk. On any failure it is removed.
    ///
    /// - throws: ``SQLCipherFormatError/damaged(path:pages:)`` naming every page that
    ///   does not authenticate or is missing; `destinationExists`, `cannotWrite`,
    ///   `cannotRead`; `cancelled` once `cancellation` is cancelled.
    public func decrypt(to output: String, progress: (@Sendable (JobProgress) -> Void)? = nil,
                        cancellation: JobCancellation? = nil) throws -> DecryptionSummary {
        try writePlaintext(to: output, salvaging: false, progress: progress, cancellation: cancellation)
    }

    /// Writes what can be read of a damaged database as a plaintext SQLite
    /// file: as ``decrypt(to:progress:cancellation:)``, but a page that does not
    /// authenticate (or is missing) becomes zeros, and a damaged page 1 a
    /// fresh header with an empty schema, so that SQLite's own recovery
    /// (the `sqlite3` shell's `.recover`) can find the tables' pages.
    ///
    /// - throws: `destinationExists`, `cannotWrite`, `cannotRead`, `cancelled`.
    public func recoverPages(to output: String, progress: (@Sendable (JobProgress) -> Void)? = nil,
                             cancellation: JobCancellation? = nil) throws -> DecryptionSummary {
        try writePlaintext(to: output, salvaging: true, progress: progress, cancellation: cancellation)
    }

    private func writePlaintext(to output: String, salvaging: Bool, progress: (@Sendable (JobProgress) -> Void)?,
                                cancellation: JobCancellation?) throws -> DecryptionSummary {
        let pageSize = layout.pageSize
        let log = try committedLog()
        let filePages = Int(reader.size / Int64(pageSize))
        let firstPage = try reader.read(pageSize, at: 0)
        let header = firstPage.count == pageSize && (firstPageAuthenticates || !cipher.authenticates)
            ? firstPage.withUnsafeBytes { Self.decryptedHeader($0, cipher) } : nil
        let counted = log?.databaseSize ?? header?.validPageCount ?? filePages
        // Pages neither the file nor the log holds are not read one by one: a
        // damaged or hostile count may say four billion.
        let available = max(filePages, Int(log?.pages.keys.max() ?? 0))
        let total = max(1, min(counted, available))
        let writer = WindowWriter(try newFile(output), windowBytes: Self.windowPages(pageSize) * pageSize)
        var finished = false
        defer { if !finished { writer.discard() } }

        let page = UnsafeMutableRawBufferPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { page.deallocate() }
        var damaged: [Int] = []
        var fromLog = 0
        // Page `number` from `source` (a whole page, or nil when missing) into `out`.
        func produce(_ number: Int, _ source: UnsafeRawBufferPointer?, into out: UnsafeMutableRawBufferPointer) throws {
            var source = source
            if let log, let offset = log.pages[UInt32(number)] {
                log.frames.bytes.withUnsafeBytes { page.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + pageSize])) }
                source = UnsafeRawBufferPointer(page)
                fromLog += 1
            }
            if number == layout.lockBytePage && log?.pages[UInt32(number)] == nil {
                out.initializeMemory(as: UInt8.self, repeating: 0)  // never written, never read
            } else if let source, !cipher.authenticates || cipher.authenticates(source, number: UInt32(number)) {
                guard cipher.decrypt(source, number: UInt32(number), into: out) else {
                    throw SQLCipherFormatError.cannotRead(path: path, reason: "OpenSSL failed to decrypt page \(number)")
                }
                if number == 1 { restoreHeader(out, from: source) }
            } else {
                damaged.append(number)
                out.initializeMemory(as: UInt8.self, repeating: 0)
                if number == 1 { writeFreshHeader(out, pageCount: total) }
            }
        }
        // The file's pages a window at a time (one read and one write per
        // window, not per page; the write on the writer's thread while the
        // next window is decrypted), then pages that only the log holds.
        var done = 0
        try forEachWindow { first, window in
            let whole = min(window.count / pageSize, total - (first - 1))
            guard whole > 0 else { return }
            let plain = try writer.buffer()
            for index in 0..<whole {
                let range = index * pageSize..<(index + 1) * pageSize
                try produce(first + index, UnsafeRawBufferPointer(rebasing: window[range]), into: UnsafeMutableRawBufferPointer(rebasing: plain[range]))
            }
            writer.submit(damaged.isEmpty || salvaging ? whole * pageSize : 0)
            done = first - 1 + whole
            if cancellation?.isCancelled == true { throw SQLCipherFormatError.cancelled }
            progress?(JobProgress(completed: done, total: total))
        }
        for number in stride(from: done + 1, through: total, by: 1) {
            let single = UnsafeMutableRawBufferPointer(rebasing: try writer.buffer()[0..<pageSize])
            try produce(number, nil, into: single)
            writer.submit(damaged.isEmpty || salvaging ? pageSize : 0)
        }
        if counted > total && !salvaging { damaged += (total + 1)...min(counted, total + 100) }
        guard damaged.isEmpty || salvaging else { throw SQLCipherFormatError.damaged(path: path, pages: damaged) }
        try writer.finish()
        finished = true
        progress?(JobProgress(completed: total, total: total))
        return DecryptionSummary(pageCount: total, pagesFromLog: fromLog, zeroedPages: damaged)
    }

    /// The transactions committed in the `-wal` beside the file, as SQLite
    /// reads them (frames up to the last commit before the chain or the
    /// salts break): each page's latest committed image, where it starts in
    /// the frames, and the database's size after the last commit. Nil when
    /// there is no log for pages of this size, or no commit in it.
    private func committedLog() throws -> (frames: CommittedFrames, pages: [UInt32: Int], databaseSize: Int)? {
        try readingFiles {
            let log = CompanionFile.wal.path(of: path)
            guard let generation = try CommittedFrames.generation(of: log), generation.pageSize == layout.pageSize else { return nil }
            let frames = try CommittedFrames.read(log, generation: generation)
            let latest = frames.latestPages()
            guard let size = latest.databasePages else { return nil }
            return (frames, latest.pages, Int(size))
        }
    }

    /// Puts back what page 1's first bytes held before SQLCipher: the magic
    /// (or the clear header as it is), and marks the file rollback-journal
    /// mode, since the plaintext copy has no `-wal` of its own.
    private func restoreHeader(_ plain: UnsafeMutableRawBufferPointer, from page: UnsafeRawBufferPointer) {
        if layout.plaintextHeaderSize > 0 {
            plain.copyMemory(from: UnsafeRawBufferPointer(rebasing: page[0..<layout.plaintextHeaderSize]))
        }
        plain.copyBytes(from: SQLiteHeader.magic)
        plain[18] = 1
        plain[19] = 1
    }

    /// A header and an empty schema table for a page 1 that did not authenticate.
    private func writeFreshHeader(_ plain: UnsafeMutableRawBufferPointer, pageCount: Int) {
        let pageSize = layout.pageSize
        func put(_ value: UInt32, at offset: Int) {
            for index in 0..<4 { plain[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(index))) }
        }
        plain.copyBytes(from: SQLiteHeader.magic)
        plain[16] = UInt8(truncatingIfNeeded: (pageSize == 65536 ? 1 : pageSize) >> 8)
        plain[17] = UInt8(truncatingIfNeeded: pageSize == 65536 ? 1 : pageSize)
        plain[18] = 1
        plain[19] = 1
        plain[20] = UInt8(layout.reserveSize)
        plain[21] = 64
        plain[22] = 32
        plain[23] = 32
        put(1, at: 24)                          // change counter
        put(UInt32(clamping: pageCount), at: 28)
        put(1, at: 40)                          // schema cookie
        put(4, at: 44)                          // schema format
        put(1, at: 56)                          // UTF-8
        put(1, at: 92)                          // version-valid-for = change counter
        put(3_015_002, at: 96)
        // An empty table b-tree leaf: sqlite_master with no rows.
        plain[100] = 13
        let contentStart = pageSize - layout.reserveSize
        plain[105] = UInt8(truncatingIfNeeded: contentStart >> 8)
        plain[106] = UInt8(truncatingIfNeeded: contentStart)
    }
}
