import DBCrypt
import DBCryptKeyStore
import DBCryptSeal
import Foundation
import SQLCipherFormat
import TestFixtures
import XCTest

/// One error vocabulary: a wrong key thrown by each module is caught by one
/// `catch` on the shared category, whichever module threw it.
final class ErrorCategoryTests: XCTestCase {
    func testAWrongKeyFromEveryModuleIsCaughtOnce() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("app.db").path
        let storage = try DirectoryBackupStorage(path: dir.appendingPathComponent("backup").path)
        var options = Database.Options()
        var manual = ContinuousBackup.Options()
        manual.interval = .seconds(3600)
        options.continuousBackup = .init(storage: storage, options: manual)
        let pool = try makePool(path, options: options, schema: "CREATE TABLE t(x)")
        _ = try SealedStore(pool, credential: .key(Self.storeKey(TestKeys.storeText)))
        _ = try pool.continuousBackup?.shipNow()
        try pool.close()
        let credentials = dir.appendingPathComponent("credentials")
        try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
        try Data().write(to: credentials.appendingPathComponent("app-key"))
        chmod(credentials.appendingPathComponent("app-key").path, 0o600)

        let attempts: [(module: String, attempt: () throws -> Void)] = [
            ("DBCrypt", { _ = try Database(path: path, key: TestKeys.other) }),
            ("DBCrypt backups", { _ = try ContinuousBackup.restore(from: storage, key: TestKeys.other, to: dir.appendingPathComponent("r.db").path) }),
            ("DBCryptSeal", {
                let queue = try DatabaseQueue(path: path, key: TestKeys.key)
                _ = try SealedStore(queue, credential: .key(Self.storeKey(TestKeys.otherStoreText)))
            }),
            ("SQLCipherFormat", { _ = try EncryptedDatabaseFile(path: path, key: TestKeys.other) }),
            ("DBCryptKeyStore", { _ = try DatabaseKey.load(from: ServiceCredentials(directory: credentials.path), service: "", account: "app-key") }),
        ]
        var caught: [String] = []
        for (module, attempt) in attempts {
            do {
                try attempt()
                XCTFail("\(module) opened with the wrong key")
            } catch let error as any DBCryptError where error.category == .wrongKey {
                caught.append(module)
                XCTAssertEqual(error.localizedDescription, error.description, module)
                XCTAssertFalse(TestKeys.secrets.contains { error.description.contains($0) }, module)
            } catch {
                XCTFail("\(module) threw \(error), not a wrong key")
            }
        }
        XCTAssertEqual(caught, attempts.map(\.module))
    }

    /// A store key from its key text, `x'<64 hex digits>'`.
    private static func storeKey(_ text: String) throws -> SealingKey {
        try SealingKey(hex: String(text.dropFirst(2).dropLast()))
    }

    /// Every category an error of each module reports is one the command
    /// line maps to a status, and each module's errors say themselves in
    /// `localizedDescription`.
    func testEveryModulesErrorsAreLocalized() {
        let errors: [any DBCryptError] = [
            DatabaseError.cancelled, BackupError.noBackup(location: "here"), SealError.notSealed,
            SQLCipherFormatError.cancelled, KeyStoreError.locked(store: "the Secret Service"),
            SchemaMigrationError.insideTransaction, CipherError.invalidKey(reason: "too short"),
        ]
        for error in errors {
            XCTAssertEqual((error as Error).localizedDescription, error.description)
        }
        XCTAssertEqual(errors.map(\.category), [.cancelled, .notFound, .misuse, .cancelled, .storage, .misuse, .misuse])
    }
}
