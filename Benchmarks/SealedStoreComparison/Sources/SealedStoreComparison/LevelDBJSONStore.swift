import CLevelDB
import Crypto
import CryptoExtras
import Foundation

/// The baseline, written as the design users bring describes it: LevelDB,
/// a key from a password by PBKDF2-SHA256 with 100,000 rounds and a salt
/// fixed in the code, every value sealed with AES-GCM and stored as JSON
/// holding the nonce, the ciphertext and the tag. LevelDB's default writes
/// (not synced). The encoder and decoder are made once, in its favour.
final class LevelDBJSONStore {
    private struct Envelope: Codable {
        var nonce: Data
        var ciphertext: Data
        var tag: Data
    }

    private let db: OpaquePointer
    private let key: SymmetricKey
    private let readOptions = leveldb_readoptions_create()
    private let writeOptions = leveldb_writeoptions_create()
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()

    init(path: String, password: String) throws {
        key = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8), salt: Array("a salt fixed in the code".utf8), using: .sha256,
            outputByteCount: 32, unsafeUncheckedRounds: 100_000)
        let options = leveldb_options_create()
        defer { leveldb_options_destroy(options) }
        leveldb_options_set_create_if_missing(options, 1)
        var error: UnsafeMutablePointer<CChar>?
        guard let db = leveldb_open(options, path, &error) else {
            defer { leveldb_free(error) }
            throw BaselineError(message: error.map { String(cString: $0) } ?? "leveldb_open failed")
        }
        self.db = db
    }

    deinit {
        leveldb_close(db)
        leveldb_readoptions_destroy(readOptions)
        leveldb_writeoptions_destroy(writeOptions)
    }

    private func sealed(_ value: Data) throws -> Data {
        let box = try AES.GCM.seal(value, using: key)
        return try encoder.encode(Envelope(nonce: Data(box.nonce), ciphertext: box.ciphertext, tag: box.tag))
    }

    func set(_ value: Data, for name: String) throws {
        let json = try sealed(value)
        var error: UnsafeMutablePointer<CChar>?
        json.withUnsafeBytes { bytes in
            leveldb_put(db, writeOptions, name, name.utf8.count,
                        bytes.baseAddress!.assumingMemoryBound(to: CChar.self), bytes.count, &error)
        }
        if let error { defer { leveldb_free(error) }; throw BaselineError(message: String(cString: error)) }
    }

    /// Every value in one LevelDB write batch.
    func set(batch: [(String, Data)]) throws {
        let writeBatch = leveldb_writebatch_create()
        defer { leveldb_writebatch_destroy(writeBatch) }
        for (name, value) in batch {
            let json = try sealed(value)
            json.withUnsafeBytes { bytes in
                leveldb_writebatch_put(writeBatch, name, name.utf8.count,
                                       bytes.baseAddress!.assumingMemoryBound(to: CChar.self), bytes.count)
            }
        }
        var error: UnsafeMutablePointer<CChar>?
        leveldb_write(db, writeOptions, writeBatch, &error)
        if let error { defer { leveldb_free(error) }; throw BaselineError(message: String(cString: error)) }
    }

    func get(_ name: String) throws -> Data? {
        var length = 0
        var error: UnsafeMutablePointer<CChar>?
        guard let value = leveldb_get(db, readOptions, name, name.utf8.count, &length, &error) else {
            if let error { defer { leveldb_free(error) }; throw BaselineError(message: String(cString: error)) }
            return nil
        }
        defer { leveldb_free(value) }
        let envelope = try decoder.decode(Envelope.self, from: Data(bytes: value, count: length))
        let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: envelope.nonce), ciphertext: envelope.ciphertext, tag: envelope.tag)
        return try AES.GCM.open(box, using: key)
    }
}

struct BaselineError: Error {
    let message: String
}
