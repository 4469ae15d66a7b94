// Fixtures that many tests read, built once per test process and copied,
// never rebuilt in every setUp.
import Foundation
import XCTest

/// A fixture file (a large database, say) built the first time a test asks
/// for it, kept for the rest of the test process, and removed when the test
/// bundle finishes. Tests read it or copy it; none may change it.
public final class SharedFixture: @unchecked Sendable {
    private let name: String
    private let build: (String) throws -> Void
    private let lock = NSLock()
    private var built: Result<String, any Error>?

    /// A fixture named `name` (its file name), which `build` makes at the
    /// path it is given.
    public init(_ name: String, build: @escaping (String) throws -> Void) {
        self.name = name
        self.build = build
    }

    /// The fixture's path, built on first use. A build that failed fails
    /// every test that asks again, with the same error.
    public func path() throws -> String {
        lock.lock()
        defer { lock.unlock() }
        if let built { return try built.get() }
        let result = Result { () throws -> String in
            let path = try SharedFixtureDirectory.shared.url.appendingPathComponent(name).path
            try? FileManager.default.removeItem(atPath: path)
            try build(path)
            return path
        }
        built = result
        return try result.get()
    }
}

/// The directory of this process's shared fixtures, removed when the test bundle ends.
private final class SharedFixtureDirectory: NSObject, XCTestObservation, @unchecked Sendable {
    static let shared = SharedFixtureDirectory()
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("dbcrypt-fixtures-\(getpid())-\(UUID().uuidString.prefix(8))", isDirectory: true)

    override private init() {
        super.init()
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        XCTestObservationCenter.shared.addTestObserver(self)
    }

    func testBundleDidFinish(_ testBundle: Bundle) {
        try? FileManager.default.removeItem(at: url)
    }
}
