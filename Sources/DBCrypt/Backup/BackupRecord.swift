import CPrimitives
import DBCryptCore
import Foundation

/// One object of a continuous backup: a header authenticated with a key
/// derived from the database's key, then a payload of encrypted pages.
///
/// Records are numbered from 1 in the order they were written, and each
/// header carries the MAC of the record before it, so that a record
/// missing, replayed under another number, or moved, breaks the chain; it
/// carries the backup's identity, drawn at random when the backup began at
/// its destination, so that a record of another backup (another database,
/// or the same one backed up twice) is never taken for one of this backup,
/// whatever key the two share; the
/// header carries the payload's SHA-256, so that a payload cut short or
/// changed is found. A *snapshot* is one or more records of kind
/// `snapshot`, whose payloads, in order, are the database file as of one
/// commit. A *frames* record holds WAL frames as SQLite wrote them (each a
/// 24-byte header and an encrypted page), continuing the log's checksum
/// chain from `seed`: applied in order on a snapshot, they give every
/// commit after it.
///
/// The header, 200 bytes, integers big-endian:
///
/// | offset | size | field |
/// |-------:|-----:|-------|
/// | 0   | 8  | magic `DBCBKUP` and version 2 |
/// | 8   | 8  | record number |
/// | 16  | 1  | kind: 1 snapshot, 2 frames |
/// | 17  | 1  | flags: bit 0 last part of a snapshot, bit 1 the log's checksums are big-endian, bit 2 a snapshot that does not follow from the records before it |
/// | 18  | 2  | zero |
/// | 20  | 4  | page size |
/// | 24  | 8  | when it was shipped, milliseconds since 1970 |
/// | 32  | 8  | snapshot: the commit it holds; frames: the number of its first commit |
/// | 40  | 4  | frames: how many commits it holds |
/// | 44  | 4  | snapshot: the part's index, from 0 |
/// | 48  | 4  | pages of the database after the record's (last) commit |
/// | 52  | 4  | frames: the log's checkpoint sequence number |
/// | 56  | 8  | frames: the log's salts |
/// | 64  | 4  | frames: the index in the log of its first frame |
/// | 68  | 4  | frames: how many frames it holds |
/// | 72  | 8  | frames: the log's running checksum before its first frame |
/// | 80  | 32 | the MAC of the record before it (zero for the first) |
/// | 112 | 32 | SHA-256 of the payload |
/// | 144 | 8  | the payload's length |
/// | 152 | 16 | the backup's identity |
/// | 168 | 32 | HMAC-SHA256 of bytes 0..<168 |
struct BackupRecord: Equatable {
    enum Kind: UInt8 { case snapshot = 1, frames = 2 }

    static let magic: [UInt8] = Array("DBCBKUP".utf8) + [2]
    static let headerSize = 200
    /// How many of the header's bytes its MAC covers.
    private static let authenticatedSize = 168
    var number: UInt64
    var kind: Kind
    var isLastPart = false
    var bigEndianChecksums = false
    /// A snapshot taken because the log was not the one last shipped (the
    /// database was closed and checkpointed while no backup ran): the frames
    /// before it do not lead to it.
    var startsOver = false
    var pageSize: UInt32
    var time: UInt64
    var commit: UInt64
    var commitCount: UInt32 = 0
    var partIndex: UInt32 = 0
    var databasePages: UInt32
    var checkpointSequence: UInt32 = 0
    var salts: [UInt8] = [UInt8](repeating: 0, count: 8)
    var firstFrame: UInt32 = 0
    var frameCount: UInt32 = 0
    var seed: (UInt32, UInt32) = (0, 0)
    var previousMAC: [UInt8]
    var payloadHash: [UInt8] = []
    var payloadLength: UInt64 = 0
    /// The backup it belongs to (``BackupIdentity``).
    var backup: BackupIdentity
    var mac: [UInt8] = []

    /// The object's name: the number, zero-padded so that names sort in
    /// order, the kind and the time it was shipped, and `-last` on a
    /// snapshot's last part: what pruning reads without fetching objects.
    var name: String {
        let digits = String(number)
        let kindName = kind == .snapshot ? "snapshot" : "frames"
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits + "-\(kindName)-\(time)" + (isLastPart ? "-last" : "")
    }

    /// What a name says: the number, kind, time and last part; nil for a name that is not a record's.
    static func parse(name: String) -> (number: UInt64, kind: Kind, time: UInt64, isLastPart: Bool)? {
        let parts = name.split(separator: "-")
        guard parts.count == 3 || parts.count == 4, parts[0].count == 16, let number = UInt64(parts[0]), let time = UInt64(parts[2]) else { return nil }
        let kind: Kind
        switch parts[1] {
        case "snapshot": kind = .snapshot
        case "frames": kind = .frames
        default: return nil
        }
        if parts.count == 4 { guard parts[3] == "last", kind == .snapshot else { return nil } }
        return (number, kind, time, parts.count == 4)
    }

    /// The last commit the record gives (a snapshot's, or a frames record's last).
    var lastCommit: UInt64 { kind == .snapshot ? commit : commit + UInt64(commitCount) - 1 }

    static func == (a: BackupRecord, b: BackupRecord) -> Bool { a.number == b.number && a.mac == b.mac }

    // MARK: - Writing

    /// The object: the header, sealed with `authenticator`, then `payload`.
    mutating func seal(payload: Data, with authenticator: BackupAuthenticator) throws -> Data {
        payloadLength = UInt64(payload.count)
        payloadHash = try payload.withUnsafeBytes { bytes in
            guard let digest = sha256(bytes) else { throw BackupError.storageFailed(location: name, reason: "SHA-256 failed") }
            return digest
        }
        var header = headerBytes()
        mac = try authenticator.mac(header)
        header += mac
        return Data(header) + payload
    }

    private func headerBytes() -> [UInt8] {
        var bytes = Self.magic
        func put<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.bigEndian) { bytes += $0 } }
        put(number)
        bytes += [kind.rawValue, (isLastPart ? 1 : 0) | (bigEndianChecksums ? 2 : 0) | (startsOver ? 4 : 0), 0, 0]
        put(pageSize)
        put(time)
        put(commit)
        put(commitCount)
        put(partIndex)
        put(databasePages)
        put(checkpointSequence)
        bytes += salts
        put(firstFrame)
        put(frameCount)
        put(seed.0)
        put(seed.1)
        bytes += previousMAC
        bytes += payloadHash
        put(payloadLength)
        bytes += backup.bytes
        return bytes
    }

    // MARK: - Reading

    /// Reads and authenticates the object `data` stored as `name`: its header's
    /// MAC, its number and kind against the name, and its payload's hash.
    /// Returns the record and its payload.
    ///
    /// - throws: ``BackupRecord/Problem``.
    static func open(_ data: Data, named name: String, with authenticator: BackupAuthenticator) throws -> (BackupRecord, Data) {
        let bytes = [UInt8](data.prefix(headerSize))
        guard bytes.count == headerSize, Array(bytes[0..<8]) == magic else { throw Problem.notARecord }
        let signed = authenticatedSize
        guard try authenticator.verify(Array(bytes[0..<signed]), mac: Array(bytes[signed..<headerSize])) else { throw Problem.notAuthentic }
        func word<T: FixedWidthInteger>(_ at: Int, _: T.Type) -> T {
            bytes[at..<at + MemoryLayout<T>.size].reduce(T(0)) { $0 << 8 | T($1) }
        }
        guard let kind = Kind(rawValue: bytes[16]) else { throw Problem.notARecord }
        var record = BackupRecord(number: word(8, UInt64.self), kind: kind, pageSize: word(20, UInt32.self), time: word(24, UInt64.self),
                                  commit: word(32, UInt64.self), databasePages: word(48, UInt32.self), previousMAC: Array(bytes[80..<112]),
                                  backup: BackupIdentity(bytes: Array(bytes[152..<168])))
        record.isLastPart = bytes[17] & 1 != 0
        record.bigEndianChecksums = bytes[17] & 2 != 0
        record.startsOver = bytes[17] & 4 != 0
        record.commitCount = word(40, UInt32.self)
        record.partIndex = word(44, UInt32.self)
        record.checkpointSequence = word(52, UInt32.self)
        record.salts = Array(bytes[56..<64])
        record.firstFrame = word(64, UInt32.self)
        record.frameCount = word(68, UInt32.self)
        record.seed = (word(72, UInt32.self), word(76, UInt32.self))
        record.payloadHash = Array(bytes[112..<144])
        record.payloadLength = word(144, UInt64.self)
        record.mac = Array(bytes[signed..<headerSize])
        guard record.name == name else { throw Problem.misplaced(holds: record.name) }
        let payload = data.dropFirst(headerSize)
        guard UInt64(payload.count) == record.payloadLength,
              payload.withUnsafeBytes({ sha256($0) }) == record.payloadHash else { throw Problem.payloadDamaged }
        return (record, Data(payload))
    }

    /// What is wrong with an object.
    enum Problem: Error, Equatable, CustomStringConvertible {
        case notARecord
        /// Its header does not authenticate: changed, or another key's.
        case notAuthentic
        /// Its header is another record's (a record copied or renamed).
        case misplaced(holds: String)
        /// Its payload is cut short or changed.
        case payloadDamaged

        var description: String {
            switch self {
            case .notARecord: "it is not a backup record (or one written by an earlier version of DBCrypt)"
            case .notAuthentic: "its header does not authenticate"
            case .misplaced(let holds): "it holds record \(holds), not the one its name says (moved or replayed)"
            case .payloadDamaged: "its content is cut short or changed"
            }
        }
    }
}

/// Which backup a record belongs to: 16 random bytes drawn when a backup
/// begins at a destination, and kept by every backup that continues it.
struct BackupIdentity: Equatable, Hashable, Sendable {
    let bytes: [UInt8]

    /// A new identity.
    ///
    /// - throws: ``BackupError/storageFailed(location:reason:)`` when the system has no randomness to give.
    static func random() throws -> BackupIdentity {
        var bytes = [UInt8](repeating: 0, count: 16)
        guard dbcrypt_random_bytes(&bytes, bytes.count) == 1 else { throw BackupError.storageFailed(location: "memory", reason: "no random bytes for the backup's identity") }
        return BackupIdentity(bytes: bytes)
    }
}

/// The key a backup's records are authenticated with: HMAC-SHA256 under a
/// key derived from the database's encryption key, so that whoever holds the
/// database's key can check a backup and no one else can forge one.
struct BackupAuthenticator: Sendable {
    private let key: HMACKey

    /// The authenticator of the database that `key` opens with `settings`,
    /// whose file has `salt`.
    ///
    /// - throws: ``DBCryptCore/CipherError`` when the key cannot be derived.
    init(databaseKey: DatabaseKey, salt: [UInt8], settings: CipherSettings) throws {
        let encryption = try databaseKey.encryptionKey(salt: salt, hash: settings.kdfHash ?? settings.formatHash,
                                                       iterations: settings.effectiveKDFIterations)
        var derived = encryption.withUnsafeBytes { bytes in
            Array("DBCrypt continuous backup records v1".utf8).withUnsafeBytes { HMACKey(bytes).mac($0) } ?? []
        }
        defer { SecretBytes.wipe(&derived) }
        key = derived.withUnsafeBytes { HMACKey($0) }
    }

    func mac(_ bytes: [UInt8]) throws -> [UInt8] {
        guard let mac = bytes.withUnsafeBytes({ key.mac($0) }) else {
            throw BackupError.storageFailed(location: "memory", reason: "no memory for the backup's key")
        }
        return mac
    }

    func verify(_ bytes: [UInt8], mac: [UInt8]) throws -> Bool {
        HMACKey.equal(try self.mac(bytes), mac)
    }
}
