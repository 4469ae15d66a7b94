import Foundation

/// The lines of a file descriptor, read in large blocks: a line of any
/// length (a 10 MB statement), without its newline; the last line even
/// without one.
public struct LineReader {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false

    /// Reads `descriptor` from where it is; it stays open.
    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// The next line, or nil at the end of the input.
    ///
    /// - throws: ``ShellError`` naming the system's error.
    public mutating func next() throws -> [UInt8]? {
        var searched = start
        while true {
            if let newline = buffer[searched...].firstIndex(of: 10) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                return line
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                defer { start = buffer.count }
                return Array(buffer[start...])
            }
            searched = buffer.count
            if start > 0 && start * 2 >= buffer.count {
                buffer.removeFirst(start)
                searched -= start
                start = 0
            }
            var block = [UInt8](repeating: 0, count: 65536)
            let count = block.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ShellError("Cannot read the input: \(String(cString: strerror(errno))).")
            }
            if count == 0 { atEnd = true } else { buffer += block[0..<count] }
        }
    }
}
