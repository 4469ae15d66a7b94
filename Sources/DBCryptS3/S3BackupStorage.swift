import DBCrypt
import DBCryptCore
import Foundation

/// A ``BackupStorage`` in S3-compatible object storage (AWS S3, Ceph's
/// RADOS Gateway, MinIO, R2, B2): each object is a key under the location's
/// prefix. The bucket holds only what a continuous backup writes, pages and
/// frames as SQLCipher encrypted them in records authenticated with the
/// database's key: its holder learns sizes and times, never a key or a
/// plaintext byte, and cannot alter, drop or reorder a record unnoticed.
///
/// ```swift
/// let location = try S3Location("s3://backups/notes", endpoint: URL(string: "https://s3.example.net"), region: "eu-1")
/// let storage = S3BackupStorage(location, credentials: try S3Credentials.fromEnvironment())
/// var options = Database.Options()
/// options.continuousBackup = .init(storage: storage)
/// ```
///
/// A record is written with `If-None-Match: *`, so it never replaces one.
/// The one writer holds a lease, the object `.writer` under the prefix,
/// taken and renewed with conditional writes (``claimWriting()``): a second
/// backup on the same prefix is refused while the first runs, and takes
/// over once it stopped, or its lease lapsed (a minute after it was
/// killed; at once when it ran on the same machine). Records above
/// ``Options/multipartThreshold`` go up in parts, and a failed upload is
/// aborted. Requests are signed with AWS Signature Version 4; failures
/// that pass are retried (``Options/maximumAttempts``), and a request the
/// service refuses is named: a wrong secret, a missing bucket, another
/// region, a clock that is off, a user that may not write.
public struct S3BackupStorage: BackupStorage {
    /// How requests are sent.
    public struct Options: Sendable {
        /// Objects larger than this go up as a multipart upload. Default: 8 MiB.
        public var multipartThreshold = 8 << 20
        /// The size of each part of a multipart upload (S3's least is 5 MiB);
        /// the last part takes the rest, up to twice this. Default: 8 MiB.
        public var partSize = 8 << 20
        /// How many times a request is sent before a failure that passes
        /// (a 5xx, a reset connection, a timeout) is reported. Default: 6,
        /// about 8 seconds of waiting in all.
        public var maximumAttempts = 6
        /// How long a request may wait for the service with no byte moving
        /// (URLSession's request timeout) before it is retried. Default: 60 seconds.
        public var timeout: Duration = .seconds(60)
        /// How long the writer's lease lasts unless renewed: how soon after
        /// a writer on another machine was killed another may take over.
        /// Renewed after a third of it, while writing. Default: 60 seconds.
        public var leaseDuration: Duration = .seconds(60)

        /// The defaults.
        public init() {}
    }

    /// Where the objects are.
    public let s3: S3Location
    public var location: String { s3.description }
    private let client: S3Client
    private let options: Options
    /// The one writer's lease: taken by ``claimWriting()``, renewed by ``put(_:_:)``.
    private let lease: S3WriterLease

    /// Objects at `location`, written with `credentials`.
    public init(_ location: S3Location, credentials: S3Credentials, options: Options = Options()) {
        s3 = location
        self.options = options
        client = S3Client(location: location, credentials: credentials, maximumAttempts: options.maximumAttempts, timeout: options.timeout)
        lease = S3WriterLease(client: client, duration: options.leaseDuration)
    }

    /// The requests this storage (and its copies) sent, by kind: `PUT`,
    /// `GET`, `LIST`, `DELETE`, `POST` (multipart uploads and batch
    /// deletes), retries included. Object storage bills per request.
    public var requestCounts: [String: Int] { client.requestCounts }

    public func put(_ name: String, _ data: Data) throws {
        let key = s3.key(try BackupObjectName.valid(name))
        try lease.renewIfDue()
        if data.count > max(options.multipartThreshold, 5 << 20) {
            try putInParts(key, data)
            return
        }
        let response = try client.send("PUT", key: key, headers: [("if-none-match", "*")], body: data)
        switch response.status {
        case 200..<300: return
        case 412:
            if response.attempts > 1, try existing(name) == data { return }   // an earlier attempt landed
            throw BackupError.objectExists(location: client.describe(key))
        default: throw failure(response, key: key, doing: "write objects")
        }
    }

    /// Writes `data` as a multipart upload, aborted when any part fails.
    /// Completing an upload is not conditional on every service (Ceph's
    /// radosgw replaces the object), so the name is claimed first: an empty
    /// object `.claim-NAME` beside it, written with `If-None-Match: *`,
    /// which ``list()`` skips and ``delete(_:)`` removes with the record.
    private func putInParts(_ key: String, _ data: Data) throws {
        let name = String(key.dropFirst(s3.keyPrefix.count))
        let claim = try client.send("PUT", key: s3.key(Self.claimPrefix + name), headers: [("if-none-match", "*")])
        switch claim.status {
        case 200..<300: break
        case 412 where claim.attempts > 1: break   // an earlier attempt of this claim landed
        case 412:
            // Claimed before: by this writer, whose upload failed (the record is not there), or by another.
            guard try existing(name) == nil else { throw BackupError.objectExists(location: client.describe(key)) }
        default: throw failure(claim, key: key, doing: "write objects")
        }
        let started = try client.send("POST", key: key, query: [("uploads", "")])
        guard started.status == 200, let upload = S3XML(started.body)?.first("UploadId") else {
            throw failure(started, key: key, doing: "write objects")
        }
        do {
            var parts: [(number: Int, etag: String)] = []
            // S3 takes at most 10,000 parts: a larger object gets larger parts.
            let partSize = max(options.partSize, 5 << 20, (data.count + 9_999) / 10_000)
            // The last part takes the rest: a record a little over two parts (a
            // header past 16 MiB of pages) goes up in two, not three.
            let count = max(1, data.count / partSize)
            var offset = 0
            while offset < data.count {
                let number = parts.count + 1
                let end = number == count ? data.count : offset + partSize
                let response = try client.send("PUT", key: key, query: [("partNumber", String(number)), ("uploadId", upload)],
                                               body: data.subdata(in: offset..<end))
                guard response.status == 200, let etag = response.headers["etag"] else { throw failure(response, key: key, doing: "write objects") }
                parts.append((number, etag))
                offset = end
            }
            var document = "<CompleteMultipartUpload>"
            for part in parts { document += "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(Self.escaped(part.etag))</ETag></Part>" }
            document += "</CompleteMultipartUpload>"
            let response = try client.send("POST", key: key, query: [("uploadId", upload)], headers: [("if-none-match", "*")],
                                           body: Data(document.utf8)) { $0.status == 200 && S3XML($0.body)?.root == "Error" }
            // A 200 whose body is an error is a failure (S3 says so once the upload took long).
            let failed = S3XML(response.body)?.root == "Error"
            switch response.status {
            case 200 where !failed: return
            case 404 where response.attempts > 1 && response.errorCode == "NoSuchUpload":
                // An earlier attempt completed it: the object must be there now, whole.
                guard try existing(name) == data else { throw failure(response, key: key, doing: "write objects") }
                return
            case 412: throw BackupError.objectExists(location: client.describe(key))
            default: throw failure(response, key: key, doing: "write objects")
            }
        } catch {
            _ = try? client.send("DELETE", key: key, query: [("uploadId", upload)])
            throw error
        }
    }

    /// Takes the location's writer lease (``S3WriterLease``): S3 has no lock
    /// that a killed writer would release.
    public func claimWriting() throws -> BackupWriterClaim {
        try lease.take()
        return BackupWriterClaim { [lease] in lease.release() }
    }

    public func get(_ name: String) throws -> Data {
        let key = s3.key(try BackupObjectName.valid(name))
        let response = try client.send("GET", key: key)
        switch response.status {
        case 200: return response.body
        case 404 where response.errorCode == "NoSuchKey" || response.errorCode == nil: throw BackupError.objectNotFound(location: client.describe(key))
        default: throw failure(response, key: key, doing: "read objects")
        }
    }

    /// The object `name`, or nil when there is none; other failures are thrown.
    private func existing(_ name: String) throws -> Data? {
        do {
            return try get(name)
        } catch BackupError.objectNotFound {
            return nil
        }
    }

    public func list() throws -> [String] {
        var names: [String] = []
        var token: String?
        repeat {
            var query: [(name: String, value: String)] = [("list-type", "2"), ("prefix", s3.keyPrefix)]
            if let token { query.append(("continuation-token", token)) }
            let response = try client.send("GET", key: nil, query: query)
            guard response.status == 200, let document = S3XML(response.body) else { throw failure(response, key: nil, doing: "list the bucket") }
            for key in document.all("Contents/Key") {
                let name = key.dropFirst(s3.keyPrefix.count)
                if key.hasPrefix(s3.keyPrefix), !name.isEmpty, !name.contains("/"), !name.hasPrefix(".") { names.append(String(name)) }
            }
            guard document.first("IsTruncated") == "true" else { break }
            // A truncated listing with no token, or the same one again, would end short or never.
            guard let next = document.first("NextContinuationToken"), !next.isEmpty, next != token else {
                throw BackupError.storageFailed(location: client.describe(nil), reason: "the service's listing was cut short without a way to go on")
            }
            token = next
        } while true
        return names
    }

    public func delete(_ name: String) throws {
        try delete([name])
    }

    /// Removes the objects (and the claims of those written in parts) with
    /// `DeleteObjects`, up to 500 names a request.
    public func delete(_ names: [String]) throws {
        let keys = try names.flatMap { name in [s3.key(try BackupObjectName.valid(name)), s3.key(Self.claimPrefix + name)] }
        for start in stride(from: 0, to: keys.count, by: 1000) {
            var document = "<Delete><Quiet>true</Quiet>"
            for key in keys[start..<min(keys.count, start + 1000)] { document += "<Object><Key>\(Self.escaped(key))</Key></Object>" }
            document += "</Delete>"
            let body = Data(document.utf8)
            // AWS wants the body's checksum: SHA-256 where it once wanted MD5.
            let checksum = Data(body.withUnsafeBytes { sha256($0) } ?? []).base64EncodedString()
            let response = try client.send("POST", key: nil, query: [("delete", "")],
                                           headers: [("x-amz-sdk-checksum-algorithm", "SHA256"), ("x-amz-checksum-sha256", checksum)], body: body)
            guard response.status == 200, let result = S3XML(response.body), result.root != "Error" else {
                throw failure(response, key: nil, doing: "delete objects")
            }
            if let refused = result.groups("Error").first(where: { $0["Code"] != "NoSuchKey" }) {
                throw BackupError.storageFailed(location: client.describe(refused["Key"]), reason: "it could not be deleted (\(refused["Code"] ?? "no reason given"))")
            }
        }
    }

    /// What begins the name of a multipart record's claim: `.`, which no record name begins with.
    private static let claimPrefix = ".claim-"

    /// The error that names why the service refused a request.
    private func failure(_ response: Response, key: String?, doing operation: String) -> BackupError {
        S3Refusal(response, credentials: client.accessKeyID, bucket: s3.bucket, region: s3.region, operation: operation)
            .error(at: client.describe(key))
    }

    private typealias Response = S3Client.Response

    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}

extension S3BackupStorage {
    /// The storage at `url` (`s3://BUCKET/PREFIX`), with what is not given
    /// read as AWS's own tools read it: the endpoint from
    /// `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` (else AWS), the region
    /// from `AWS_REGION` or `AWS_DEFAULT_REGION` (else us-east-1), the
    /// credentials as ``S3Credentials/fromEnvironment()``.
    ///
    /// - throws: ``S3LocationError`` for a location or endpoint written
    ///   wrongly, ``S3CredentialsError`` when no credentials are found.
    public static func fromEnvironment(_ url: String, endpoint: URL? = nil, region: String? = nil, credentials: S3Credentials? = nil,
                                       options: Options = Options()) throws -> S3BackupStorage {
        func variable(_ name: String) -> String? { ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        var endpoint = endpoint
        if endpoint == nil, let text = variable("AWS_ENDPOINT_URL_S3") ?? variable("AWS_ENDPOINT_URL") {
            guard let url = URL(string: text) else { throw S3LocationError.invalidEndpoint(text) }
            endpoint = url
        }
        let location = try S3Location(url, endpoint: endpoint, region: region ?? variable("AWS_REGION") ?? variable("AWS_DEFAULT_REGION") ?? "us-east-1")
        return S3BackupStorage(location, credentials: try credentials ?? S3Credentials.fromEnvironment(), options: options)
    }
}
