import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// The text of an S3 XML document's leaf elements, in document order, each
/// with its path from the root's children (`Contents/Key`, `Code`): all
/// that S3's responses need reading.
struct S3XML {
    /// Each leaf element's path (namespaces dropped) and text.
    private(set) var leaves: [(path: String, text: String)] = []
    /// The root element's name.
    private(set) var root = ""

    /// Reads `data`; nil when it is not well-formed XML.
    init?(_ data: Data) {
        let reader = Reader()
        let parser = XMLParser(data: data)
        parser.delegate = reader
        parser.shouldProcessNamespaces = true
        guard parser.parse() else { return nil }
        leaves = reader.leaves
        root = reader.root
    }

    /// The text of the first leaf at `path`.
    func first(_ path: String) -> String? { leaves.first { $0.path == path }?.text }

    /// The text of every leaf at `path`.
    func all(_ path: String) -> [String] { leaves.filter { $0.path == path }.map(\.text) }

    /// Groups: for each element at `path`, its leaves by their name below it
    /// (`Error` in a DeleteObjects result: `Key`, `Code`, `Message`).
    func groups(_ path: String) -> [[String: String]] {
        var groups: [[String: String]] = []
        var current: [String: String]?
        for leaf in leaves {
            guard leaf.path.hasPrefix(path + "/") else {
                if let group = current { groups.append(group); current = nil }
                continue
            }
            let name = String(leaf.path.dropFirst(path.count + 1))
            if current?[name] != nil { groups.append(current!); current = nil }
            current = (current ?? [:]).merging([name: leaf.text]) { $1 }
        }
        if let current { groups.append(current) }
        return groups
    }

    private final class Reader: NSObject, XMLParserDelegate {
        var leaves: [(path: String, text: String)] = []
        var root = ""
        private var stack: [String] = []
        private var text = ""
        private var hasChildren = false

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            if root.isEmpty { root = name } else { stack.append(name) }
            text = ""
            hasChildren = false
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if !hasChildren, !stack.isEmpty { leaves.append((stack.joined(separator: "/"), text)) }
            if stack.isEmpty { return }
            stack.removeLast()
            text = ""
            hasChildren = true
        }
    }
}
