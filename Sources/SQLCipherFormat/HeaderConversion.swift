extension EncryptedDatabaseFile {
    /// Writes a copy of the file whose page 1 keeps its first
    /// `plaintextHeaderSize` bytes in the clear (32 for an iOS app sharing a
    /// WAL database with an extension), or, with 0, the standard layout with
    /// the salt in front. Page 1 is decrypted and encrypted again under a
    /// fresh IV; every other page is copied as it is, after it authenticates.
    /// The key and salt stay the same: a file with a plaintext header opens
    /// with the key and this ``salt`` (SQLCipher's `cipher_plaintext_header_size`
    /// and `cipher_salt`).
    ///
    /// `output` must not exist, or be empty; it is created with mode 0600,
    /// flushed to disk, and removed on any failure.
    ///
    /// - returns: the copy's settings.
    /// - throws: ``SQLCipherFormatError/unfinishedLog(path:)`` when the `-wal`
    ///   beside the file holds frames (checkpoint them first: a log must never
    ///   meet a file it was not written for); `damaged` naming the pages that do
    ///   not authenticate; `destinationExists`,
    ///   `cannotWrite`, `cannotRead`; `cancelled` once `cancellation` is cancelled.
    public func convertHeader(to output: String, plaintextHeaderSize: Int, progress: (@Sendable (JobProgress) -> Void)? = nil,
                              cancellation: JobCancellation? = nil) throws -> CipherSettings {
        var convertedSettings = settings
        convertedSettings.plaintextHeaderSize = plaintextHeaderSize
        try convertedSettings.validate()
        let converted = PageLayout(convertedSettings)
        if let log = try readingFiles({ try WriteAheadLog.beside(path, pageSize: layout.pageSize) }) {
            var frames = 0
            try readingFiles { try log.scan({ _, _ in frames += 1 }, cutShort: { _, _ in }) }
            guard frames == 0 else { throw SQLCipherFormatError.unfinishedLog(path: path) }
        }
        let writer = try newFile(output)
        var finished = false
        defer { if !finished { writer.discard() } }
        let pageSize = layout.pageSize
        let newCipher = try PageCipher(encryptionKey: cipher.encryptionKey, salt: salt, layout: converted)
        var damaged: [Int] = []
        try forEachWindow { first, window in
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: window.count, alignment: 16)
            defer { copy.deallocate() }
            copy.copyMemory(from: window)
            for (index, start) in stride(from: 0, to: window.count, by: pageSize).enumerated() {
                let number = first + index
                let page = UnsafeRawBufferPointer(rebasing: window[start..<min(start + pageSize, window.count)])
                guard page.count == pageSize, number == layout.lockBytePage || !cipher.authenticates
                        || cipher.authenticates(page, number: UInt32(number)) else {
                    damaged.append(number)
                    continue
                }
                if number == 1 {
                    try reencryptFirstPage(page, with: newCipher, into: UnsafeMutableRawBufferPointer(rebasing: copy[0..<pageSize]))
                }
            }
            if damaged.isEmpty {
                do throws(FileError) { try writer.write(UnsafeRawBufferPointer(copy)) } catch { throw SQLCipherFormatError(writing: error) }
            }
            if cancellation?.isCancelled == true { throw SQLCipherFormatError.cancelled }
            progress?(JobProgress(completed: first - 1 + window.count / pageSize, total: pageCount))
        }
        guard damaged.isEmpty else { throw SQLCipherFormatError.damaged(path: path, pages: damaged) }
        do throws(FileError) { try writer.finish() } catch { throw SQLCipherFormatError(writing: error) }
        finished = true
        return convertedSettings
    }

    private func reencryptFirstPage(_ page: UnsafeRawBufferPointer, with newCipher: PageCipher, into out: UnsafeMutableRawBufferPointer) throws {
        let plain = UnsafeMutableRawBufferPointer.allocate(byteCount: page.count, alignment: 16)
        defer {
            plain.initializeMemory(as: UInt8.self, repeating: 0)
            plain.deallocate()
        }
        guard cipher.decrypt(page, number: 1, into: plain) else {
            throw SQLCipherFormatError.cannotRead(path: path, reason: "OpenSSL failed to decrypt page 1")
        }
        if layout.plaintextHeaderSize > 0 {
            plain.copyMemory(from: UnsafeRawBufferPointer(rebasing: page[0..<layout.plaintextHeaderSize]))
        }
        plain.copyBytes(from: SQLiteHeader.magic)
        guard newCipher.encrypt(UnsafeRawBufferPointer(plain), number: 1, into: out) else {
            throw SQLCipherFormatError.cannotWrite(path: path, reason: "OpenSSL failed to encrypt page 1")
        }
        let clear = newCipher.layout.plaintextHeaderSize
        if clear > 0 {
            out.copyMemory(from: UnsafeRawBufferPointer(rebasing: plain[0..<clear]))
        } else {
            out.copyBytes(from: salt)
        }
    }
}
