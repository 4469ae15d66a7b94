import Foundation
import Synchronization

/// The real S3 server the tests talk to: a one-node Ceph cluster with its
/// RADOS Gateway on 127.0.0.1, started by `scripts/s3-server` (once, and
/// again only when it is not answering), its settings read from the file
/// that script writes. In an engine's root, where no Ceph runs,
/// `scripts/test` copies the host's file in and the root's tests use the
/// host's gateway.
///
/// `make test` runs tests two at a time, each in a process of its own, and
/// a test that kills the gateway must not kill it under another test: a
/// process that uses the server holds a shared lock on
/// `.build/s3-server/users.lock` until it ends, and one that kills the
/// gateway holds it alone (``killGateway()`` waits for the other users to
/// end, and new ones wait for it) until it started the gateway again
/// (``startGateway()``), or until the end of ``withGatewayAlone(_:)``.
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
        GatewayUsers.share()
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

    /// Kills the gateway (SIGKILL), leaving the cluster up, once no other
    /// test process uses it: this one then has it alone until ``startGateway()``.
    public func killGateway() throws {
        try GatewayUsers.holdAlone()
        try Self.runScript("kill-gateway")
    }

    /// Starts the gateway again and waits until it answers; then other
    /// test processes may use it again, unless within ``withGatewayAlone(_:)``.
    public func startGateway() throws {
        try Self.runScript("start-gateway")
        GatewayUsers.shareUnlessWithin()
    }

    /// Runs `body` with the gateway to this process alone (other test
    /// processes that use it end first, new ones wait), then starts the
    /// gateway again whatever `body` did: for a test that kills it several
    /// times.
    public func withGatewayAlone<T>(_ body: () throws -> T) throws -> T {
        try GatewayUsers.holdAlone(within: true)
        defer {
            if !answers() { try? Self.runScript("start-gateway") }
            GatewayUsers.leave()
        }
        return try body()
    }

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

/// The lock that keeps a test from killing the gateway under another test
/// process (see ``S3TestServer``): shared by every process that uses the
/// server, held alone by one that kills the gateway. flock(2), so a process
/// that ends, however, lets go.
private enum GatewayUsers {
    private struct State {
        var fd: Int32 = -1
        var alone = false
        /// How many ``S3TestServer/withGatewayAlone(_:)`` are under way.
        var within = 0
    }
    private static let state = Mutex(State())

    /// Opened once, closed on exec: a child (dbcrypt, the helper, radosgw) never holds it.
    private static func descriptor(_ state: inout State) -> Int32 {
        if state.fd < 0 {
            let dir = S3TestServer.root.appendingPathComponent(".build/s3-server").path
            try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            state.fd = open(dir + "/users.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        }
        return state.fd
    }

    /// Takes the lock shared (waits while a process holds it alone).
    static func share() {
        state.withLock { state in
            let fd = descriptor(&state)
            guard fd >= 0 else { return }
            // A gateway being killed and started again is down for seconds, not minutes.
            _ = waitUntil(timeout: 600, every: 0.01) { flock(fd, LOCK_SH | LOCK_NB) == 0 }
            state.alone = false
        }
    }

    /// Takes the lock alone, once every other process that uses the server ended.
    static func holdAlone(within: Bool = false) throws {
        try state.withLock { state in
            let fd = descriptor(&state)
            if !state.alone, fd >= 0 {
                // Its shared hold goes first: two processes waiting to hold it alone must not each keep the other out.
                flock(fd, LOCK_UN)
                guard waitUntil(timeout: 600, every: 0.01, { flock(fd, LOCK_EX | LOCK_NB) == 0 }) else {
                    throw CocoaError(.fileLocking, userInfo: [NSLocalizedDescriptionKey: "other tests used the S3 gateway for 10 minutes: it cannot be killed under them"])
                }
                state.alone = true
            }
            if within { state.within += 1 }
        }
    }

    /// Shares the lock again after ``S3TestServer/startGateway()``, unless within ``S3TestServer/withGatewayAlone(_:)``.
    static func shareUnlessWithin() {
        guard state.withLock({ $0.alone && $0.within == 0 }) else { return }
        share()
    }

    /// Leaves one ``S3TestServer/withGatewayAlone(_:)``: the last shares the lock again.
    static func leave() {
        guard state.withLock({ state in
            state.within -= 1
            return state.within == 0 && state.alone
        }) else { return }
        share()
    }
}
