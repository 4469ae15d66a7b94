import Foundation
import XCTest
@testable import DBCrypt

/// The routines' typed errors for links, hard links and an output that is
/// the input, and the files they leave.
final class DatabaseEncryptionPathTests: XCTestCase {
    let key = DatabaseKey.named("paths")
    var dir: URL!

    override func setUpWithError() throws {
        dir = try makeTemporaryDirectory(self)
    }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    func testInPlaceThroughALinkEncryptsItsTarget() throws {
        try EncryptionFixture.create(at: path("real.db"), rows: 50)
        XCTAssertEqual(symlink(path("real.db"), path("app.db")), 0)
        try DatabaseEncryption.migrateInPlace(path("app.db"), key: key)
        XCTAssertEqual(try FileFormat.detect(at: path("real.db")), .notPlaintext)
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: path("app.db")), path("real.db"))
        try DatabaseEncryption.changeKey(path("app.db"), from: key, to: .named("new"))
        XCTAssertNoThrow(try Database(path: path("real.db"), key: .named("new")))
    }

    func testHardLinksAreATypedRefusalUnlessAllowed() throws {
        try EncryptionFixture.create(at: path("app.db"), rows: 50)
        XCTAssertEqual(link(path("app.db"), path("other.db")), 0)
        XCTAssertThrowsError(try DatabaseEncryption.migrateInPlace(path("app.db"), key: key)) { error in
            XCTAssertEqual(error as? DatabaseError, .hardLinked(path: path("app.db"), links: 2))
        }
        var options = ExportOptions()
        options.replaceHardLinkedFile = true
        try DatabaseEncryption.migrateInPlace(path("app.db"), key: key, options: options)
        XCTAssertEqual(try FileFormat.detect(at: path("app.db")), .notPlaintext)
        XCTAssertNotEqual(try FileFormat.detect(at: path("other.db")), .notPlaintext)
    }

    func testAnOutputThatIsTheInputIsATypedRefusal() throws {
        try EncryptionFixture.create(at: path("plain.db"), rows: 50)
        try DatabaseEncryption.encrypt(path("plain.db"), to: path("e.db"), key: key)
        XCTAssertEqual(link(path("e.db"), path("same.db")), 0)
        var options = ExportOptions()
        options.replaceExisting = true
        for output in [path("e.db"), path("same.db")] {
            XCTAssertThrowsError(try DatabaseEncryption.decrypt(path("e.db"), key: key, to: output, options: options)) { error in
                XCTAssertEqual(error as? DatabaseError, .destinationIsSource(path: output))
            }
        }
        XCTAssertThrowsError(try DatabaseEncryption.encrypt(path("plain.db"), to: path("plain.db"), key: key, options: options)) { error in
            XCTAssertEqual(error as? DatabaseError, .destinationIsSource(path: path("plain.db")))
        }
        XCTAssertEqual(try FileFormat.detect(at: path("e.db")), .notPlaintext)
    }

    func testAnExistingOutputThatIsALinkIsReplacedThroughIt() throws {
        try EncryptionFixture.create(at: path("plain.db"), rows: 50)
        try EncryptionFixture.create(at: path("old-export.db"), rows: 1)
        XCTAssertEqual(symlink(path("old-export.db"), path("export.db")), 0)
        var options = ExportOptions()
        options.replaceExisting = true
        try DatabaseEncryption.encrypt(path("plain.db"), to: path("export.db"), key: key, options: options)
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: path("export.db")), path("old-export.db"))
        XCTAssertEqual(try FileFormat.detect(at: path("old-export.db")), .notPlaintext)
    }
}
