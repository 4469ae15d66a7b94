import DBCryptCore
import Foundation

/// A database's pages as of its last commit, byte for byte as SQLCipher
/// wrote them (encrypted, each with its HMAC): the file's pages, with the
/// WAL's committed frames laid over them. What a continuous backup's
/// snapshot ships, and what a backup with the database's own key copies:
/// no page is decrypted or encrypted again.
///
/// Read while a read transaction of this process holds its snapshot: no
/// checkpoint then copies a frame past that read's mark into the file, and
/// every frame it may copy is one laid over the file here, so the file's
/// other pages are stable; and the log is not started over while the read
/// holds a mark in it (a log read while it starts over fails its salts and
/// checksums and is taken as it was at the last commit read whole).
struct DatabaseImage {
    let pageSize: Int
    /// How many pages the image has: the database's size after the last commit taken.
    let pages: UInt32
    /// The frames laid over the file, and the log's checksum after them.
    let frameCount: Int
    let end: (UInt32, UInt32)
    private let path: String
    private let file: FileReader
    private let logged: CommittedFrames?
    /// Where each page's latest frame's page starts in `logged`'s bytes.
    private let overlay: [UInt32: Int]

    /// The image of the database at `path`, with the first `frameLimit`
    /// frames of `generation` (every committed one when nil) laid over its
    /// file; nil when the log no longer holds that many.
    ///
    /// - throws: ``DatabaseError`` when the file or its log cannot be read.
    init?(path: String, pageSize: Int, generation: WriteAheadLogHeader?, frameLimit: Int? = nil) throws {
        file = try DatabaseError.translating { () throws(FileError) in try FileReader(path: path) }
        self.path = path
        self.pageSize = pageSize
        var pages = UInt32(file.size / Int64(pageSize))
        var overlay: [UInt32: Int] = [:]
        var logged: CommittedFrames?
        var count = 0
        var end = generation?.checksum ?? (0, 0)
        if let generation, frameLimit != 0 {
            let frames = try DatabaseError.translating { () throws(FileError) in try CommittedFrames.read(CompanionFile.wal.path(of: path), generation: generation) }
            count = frameLimit ?? frames.frameCount
            guard frames.frameCount >= count else { return nil }
            let latest = frames.latestPages(through: count)
            overlay = latest.pages
            pages = latest.databasePages ?? pages
            end = frames.chain(through: count)
            logged = frames
        }
        self.pages = pages
        self.frameCount = count
        self.end = end
        self.logged = logged
        self.overlay = overlay
    }

    /// Copies pages `first...last` (numbered from 1) into `buffer`, which holds exactly them.
    ///
    /// - throws: ``DatabaseError`` when the file cannot be read.
    func read(_ first: UInt32, through last: UInt32, into buffer: UnsafeMutableRawBufferPointer) throws {
        guard first <= last else { return }
        for page in first...last {
            let at = Int(page - first) * pageSize
            let target = UnsafeMutableRawBufferPointer(rebasing: buffer[at..<at + pageSize])
            if let logged, let offset = overlay[page] {
                logged.bytes.withUnsafeBytes { target.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + pageSize])) }
                continue
            }
            let got = try DatabaseError.translating { () throws(FileError) in try file.read(into: target, at: Int64(page - 1) * Int64(pageSize)) }
            guard got == pageSize else {
                throw DatabaseError.cannotOpen(path: path, reason: "page \(page) was cut short while it was read")
            }
        }
    }
}
