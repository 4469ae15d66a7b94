import DBCrypt
import DBCryptSeal
import Foundation

/// Untrusted bytes met by DBCryptSeal: a sealed value, a server envelope,
/// key text, a store's key derivation parameters, and a store entry whose
/// name or value was replaced. The first byte picks which. Each is opened
/// or refused with a typed error, and nothing traps.
func expectSealError(_ body: () throws -> Void) {
    do {
        try body()
    } catch is SealError {
    } catch let error as DatabaseError {
        fatalError("a database error where a seal error was expected: \(error)")
    } catch {
        fatalError("unexpected error \(error)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSeal(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Data(UnsafeRawBufferPointer(start: start, count: count))
    guard let mode = bytes.first else { return 0 }
    let input = bytes.dropFirst()
    let text = String(decoding: input, as: UTF8.self)
    switch mode % 5 {
    case 0:
        expectSealError { _ = try key.open(input, context: "fuzz") }
        expectSealError { _ = try ring.open(input, context: "fuzz") }
    case 1:
        expectSealError { _ = try envelope.open(text) }
    case 2:
        for make in [{ try SealingKey(text: text) }, { try SealingKey(hex: text) }, { try SealingKey(base64: text) },
                     { try SealingKey(paddedText: text) }] {
            do {
                let made = try make()
                guard "\(made)".contains("redacted") else { fatalError("a key printed its bytes") }
            } catch let error as SealError {
                guard case .invalidKey = error else { fatalError("unexpected error \(error)") }
            } catch {
                fatalError("unexpected error \(error)")
            }
        }
    case 3:
        // Parameters as a damaged header row would hold them: checked, never run.
        if let kdf = try? JSONDecoder().decode(KeyDerivation.self, from: input) {
            expectSealError { try kdf.validate() }
        }
    default:
        // A store entry whose value, then whose name, holds the bytes.
        let store = store   // made (with its tables) on first use
        try! queue.write { db in
            try db.execute("UPDATE dbcrypt_sealed_entry SET value = ?", [input])
        }
        expectSealError { _ = try store.get("k") }
        try! queue.write { db in
            try db.execute("UPDATE dbcrypt_sealed_entry SET name = ?", [input])
        }
        expectSealError { _ = try store.names() }
        _ = try? store.get("k")
        try! queue.write { db in try db.execute("DELETE FROM dbcrypt_sealed_entry") }
        try! store.set("value", for: "k")
    }
    return 0
}
