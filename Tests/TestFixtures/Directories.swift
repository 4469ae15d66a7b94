// Files and folders the tests work in: temporary directories, and small
// disks that fill up.
import Foundation
import XCTest

/// A fresh directory under the system's temporary directory, removed at the end of the test.
public func makeTemporaryDirectory(_ test: XCTestCase) throws -> URL {
    ProcessExit.waitsForConnections
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("dbcrypt-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
}

/// A new directory `name` in `directory` with a tmpfs of `size` (`"2m"`)
/// mounted on it, unmounted at the end of the test: a disk that fills up.
/// Skips the test where mounting is refused (it needs root).
public func mountSmallDisk(_ test: XCTestCase, in directory: URL, name: String = "small", size: String,
                           function: String = #function, file: String = #fileID) throws -> URL {
    let mountPoint = directory.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
    let (status, _, _) = try runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", mountPoint.path])
    try skipUnless(status == 0, "mounting a tmpfs needs root", function: function, file: file)
    test.addTeardownBlock { _ = try? runProgram("/bin/umount", [mountPoint.path]) }
    return mountPoint
}
