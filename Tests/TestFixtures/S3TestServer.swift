import Foundation

/// The real S3 server the tests talk to: a one-node Ceph cluster with its
/// RADOS Gateway on 127.0.0.1, started by `scripts/s3-server` (once, and
/// again only when it is not answering), its settings read from the file
/// that script writes. In an engine's root, where no Ceph runs,
/// `scripts/test` copies the host's file in and the root's tests use the
/// host's gateway.
public struct S3TestServer: Sendable {
    /// The gateway's endpoint, `http://127.0.0.1:PORT`.
    public let endpoint: String
    /// The region requests are signed for.
    public let region: String
    /// The bucket the tests write in, each under a prefix of its own.
    public let bucket: String
    /// A user that may write the bucket.
    public let accessKeyID: String
    public let secretAccessKey: String
    /// A user the bucket's policy lets read and list only.
    public let readerAccessKeyID: String
    public let readerSecretAccessKey: String

    /// The server, started when it is not answering.
    public static let shared: S3TestServer = {
        do {
            if let server = try? S3TestServer(envFile: envFile), server.answers() { return server }
            try runScript("start")
            return try S3TestServer(envFile: envFile)
        } catch {
            fatalError("cannot start the S3 server (scripts/s3-server start): \(error)")
        }
    }()

    /// The repository's root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var envFile: String { root.appendingPathComponent(".build/s3-server/env").path }

    init(envFile: String) throws {
        var values: [String: String] = [:]
        for line in try String(contentsOfFile: envFile, encoding: .utf8).split(separator: "\n") {
            var text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("export ") { text.removeFirst(7) }
            guard let equals = text.firstIndex(of: "=") else { continue }
            values[String(text[..<equals])] = String(text[text.index(after: equals)...]).trimmingCharacters(in: CharacterSet(charactersIn: "'\""))
        }
        func value(_ name: String) throws -> String {
            guard let value = values[name], !value.isEmpty else { throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: envFile]) }
            return value
        }
        endpoint = try value("AWS_ENDPOINT_URL")
        region = try value("AWS_REGION")
        bucket = try value("DBCRYPT_S3_BUCKET")
        accessKeyID = try value("AWS_ACCESS_KEY_ID")
        secretAccessKey = try value("AWS_SECRET_ACCESS_KEY")
        readerAccessKeyID = try value("DBCRYPT_S3_READER_ACCESS_KEY_ID")
        readerSecretAccessKey = try value("DBCRYPT_S3_READER_SECRET_ACCESS_KEY")
    }

    /// A location of its own for one test: `s3://BUCKET/t-<random>`.
    public func freshLocation(_ name: String = "t") -> String {
        "s3://\(bucket)/\(name)-\(UUID().uuidString.lowercased().prefix(12))"
    }

    /// The variables that give a child process (dbcrypt, the test helper)
    /// this server and the writing user: AWS's usual names.
    public var environment: [String: String] {
        ["AWS_ENDPOINT_URL": endpoint, "AWS_REGION": region, "AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": secretAccessKey]
    }

    /// Kills the gateway (SIGKILL), leaving the cluster up.
    public func killGateway() throws { try Self.runScript("kill-gateway") }

    /// Starts the gateway again and waits until it answers.
    public func startGateway() throws { try Self.runScript("start-gateway") }

    /// Whether the gateway answers on its port.
    func answers() -> Bool {
        guard let url = URL(string: endpoint), let port = url.port else { return false }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    private static func runScript(_ verb: String) throws {
        let process = Process()
        process.executableURL = root.appendingPathComponent("scripts/s3-server")
        process.arguments = [verb]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "scripts/s3-server \(verb) exited with \(process.terminationStatus)"])
        }
    }
}
