extension EncryptedDatabaseFile {
    /// Checks every page of the file (in use, free, or past the end of the
    /// b-tree; but the lock-byte page at 1 GiB, which no SQLite writes) and every frame of the current log in the `-wal` beside it,
    /// reading a bounded window at a time. `progress`, if given, is called
    /// with the pages done after each window.
    ///
    /// - throws: ``SQLCipherFormatError/cannotRead(path:reason:)``, or
    ///   ``SQLCipherFormatError/cancelled`` once `cancellation` is cancelled.
    public func verify(progress: (@Sendable (JobProgress) -> Void)? = nil, cancellation: JobCancellation? = nil) throws -> VerificationReport {
        var collector = DamageCollector()
        let pageSize = layout.pageSize
        let log = try readingFiles { try WriteAheadLog.beside(path, pageSize: pageSize) }
        let total = pageCount + Int((log?.reader.size ?? 0) / Int64(pageSize))
        var done = 0
        try forEachWindow { first, window in
            for (index, pageStart) in stride(from: 0, to: window.count, by: pageSize).enumerated() {
                let number = first + index
                let offset = Int64(number - 1) * Int64(pageSize)
                guard number != layout.lockBytePage else { continue }
                let page = UnsafeRawBufferPointer(rebasing: window[pageStart..<min(pageStart + pageSize, window.count)])
                guard page.count == pageSize else {
                    collector.add(PageDamage(page: number, location: .database, byteRange: offset..<offset + Int64(page.count), kind: .shortPage))
                    continue
                }
                if let kind = check(page, number: UInt32(number)) {
                    collector.add(PageDamage(page: number, location: .database, byteRange: offset..<offset + Int64(pageSize), kind: kind))
                }
            }
            done += window.count / pageSize
            if cancellation?.isCancelled == true { throw SQLCipherFormatError.cancelled }
            progress?(JobProgress(completed: done, total: total))
        }
        if let missing = try missingPages() {
            collector.add(missing)
        }
        let (frames, logDamage) = try verifyLog(log)
        for damage in logDamage { collector.add(damage) }
        return VerificationReport(layout: layout, pageCount: pageCount, walFrameCount: frames,
                                  authenticated: cipher.authenticates, damage: collector.damage, damageCount: collector.count)
    }

    /// Checks every frame of the current log in the `-wal` beside the file,
    /// as ``verify(progress:cancellation:)`` does: its header, and each frame's HMAC,
    /// salts and checksum. A log the file ends inside its last frame is not
    /// damage (a process killed while appending), nor are frames after the
    /// last commit (SQLite ignores them).
    ///
    /// - returns: the frames of the current log, and the damage found.
    /// - throws: ``SQLCipherFormatError/cannotRead(path:reason:)``.
    public func verifyLog() throws -> (frameCount: Int, damage: [PageDamage]) {
        try verifyLog(readingFiles { try WriteAheadLog.beside(path, pageSize: layout.pageSize) })
    }

    private func verifyLog(_ log: WriteAheadLog?) throws -> (frameCount: Int, damage: [PageDamage]) {
        guard let log else { return (0, []) }
        return try readingFiles { try verifyFrames(of: log) }
    }

    private func verifyFrames(of log: WriteAheadLog) throws -> (frameCount: Int, damage: [PageDamage]) {
        var damage: [PageDamage] = []
        if !log.headerIsValid {
            damage.append(PageDamage(page: nil, location: .wal(frame: 0), byteRange: 0..<Int64(WriteAheadLogHeader.size), kind: .badHeader))
        }
        // Frames after the last commit are a transaction never committed, one
        // rolled back after it spilled to the log, or a frame a killed writer
        // left half written over an earlier log's: SQLite never reads them,
        // and nothing in them is damage. A frame at or before the last commit
        // that breaks the chain is, even the last one: a commit whose checksum
        // changed on disk is dropped silently.
        var frameDamage: [(index: Int, damage: PageDamage)] = []
        var lastCommit = -1
        var frames = 0
        let stop = try log.scan({ frame, page in
            frames += 1
            if frame.commitSize != 0 { lastCommit = frame.index }
            // The frame's header is in the range: its page number is part of the HMAC.
            let whole = frame.offset..<log.pageRange(of: frame).upperBound
            if let kind = check(page, number: frame.pageNumber) ?? (frame.headerMatches ? nil : .walFrameHeader) {
                frameDamage.append((frame.index, PageDamage(page: Int(frame.pageNumber), location: .wal(frame: frame.index), byteRange: whole, kind: kind)))
            }
        }, cutShort: { _, _ in })
        if let stop, try log.commitsWithTheLogsSalts(after: stop) > 0 {
            // A frame with neither the log's salts nor its chain, and commits of this log after it.
            frameDamage.append((stop, PageDamage(page: nil, location: .wal(frame: stop), byteRange: log.byteRange(ofFrame: stop), kind: .walFrameHeader)))
            lastCommit = Int.max
        }
        damage += frameDamage.filter { $0.index <= lastCommit }.map(\.damage)
        return (frames, damage)
    }

    /// What is wrong with one whole page, or nil.
    private func check(_ page: UnsafeRawBufferPointer, number: UInt32) -> PageDamage.Kind? {
        if cipher.authenticates {
            guard cipher.authenticates(page, number: number) else { return .hmacMismatch }
        }
        if number == 1 {
            guard let header = Self.decryptedHeader(page, cipher), header.pageSize == layout.pageSize,
                  header.reserve >= layout.reserveSize else { return .badHeader }
        }
        return nil
    }

    /// The pages page 1's header counts that the file does not have, as one
    /// damage. Page 1 as it is now must authenticate (it may have changed
    /// since the file was opened): a damaged header's count is noise.
    private func missingPages() throws -> PageDamage? {
        let page = try reader.read(layout.pageSize, at: 0)
        guard page.count == layout.pageSize, !cipher.authenticates || page.withUnsafeBytes({ cipher.authenticates($0, number: 1) }),
              let counted = page.withUnsafeBytes({ Self.decryptedHeader($0, cipher) })?.validPageCount else { return nil }
        let have = Int(reader.size / Int64(layout.pageSize))
        guard counted > have else { return nil }
        let size = Int64(layout.pageSize)
        return PageDamage(page: have + 1, location: .database, byteRange: Int64(have) * size..<Int64(counted) * size, kind: .missing)
    }

    /// Pages per window of reading: 1 MiB of them.
    static func windowPages(_ pageSize: Int) -> Int { max(1, (1 << 20) / pageSize) }

    /// Calls `body` with the file read a window of whole pages at a time (the
    /// last window may end in a partial page), and the number of its first page.
    func forEachWindow(_ body: (Int, UnsafeRawBufferPointer) throws -> Void) throws {
        let pageSize = layout.pageSize
        let pagesPerWindow = Self.windowPages(pageSize)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: pagesPerWindow * pageSize, alignment: 16)
        defer { buffer.deallocate() }
        var first = 1
        while Int64(first - 1) * Int64(pageSize) < reader.size {
            let got = try reader.read(into: buffer, at: Int64(first - 1) * Int64(pageSize))
            guard got > 0 else { break }
            try body(first, UnsafeRawBufferPointer(rebasing: buffer[0..<got]))
            first += pagesPerWindow
        }
    }
}

/// The damage list, bounded, and the full count.
struct DamageCollector {
    private(set) var damage: [PageDamage] = []
    private(set) var count = 0

    mutating func add(_ item: PageDamage) {
        count += 1
        if damage.count < VerificationReport.damageLimit { damage.append(item) }
    }
}
