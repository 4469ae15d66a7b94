import Foundation
import DBCryptCore

/// Where a backup's objects live in S3-compatible storage: a bucket, a key
/// prefix in it, and the service's endpoint and region.
///
/// ```swift
/// let location = try S3Location("s3://backups/notes", endpoint: URL(string: "http://127.0.0.1:7480"))
/// ```
public struct S3Location: Sendable, Equatable, CustomStringConvertible {
    /// How a request names the bucket.
    public enum Addressing: Sendable, Equatable {
        /// `https://ENDPOINT/BUCKET/KEY`: what most S3-compatible services
        /// (Ceph, MinIO, and any endpoint given by IP address) expect.
        case pathStyle
        /// `https://BUCKET.ENDPOINT/KEY`: what AWS expects.
        case virtualHosted
    }

    /// The bucket.
    public let bucket: String
    /// The key prefix, without a trailing `/`; empty for the bucket's top.
    public let prefix: String
    /// The service's endpoint: AWS's regional endpoint when none is given.
    public let endpoint: URL
    /// The region requests are signed for.
    public let region: String
    /// How requests name the bucket.
    public let addressing: Addressing

    /// The location named by `url` (`s3://BUCKET/PREFIX`), at `endpoint`
    /// (AWS's `https://s3.REGION.amazonaws.com` when nil), signed for `region`.
    /// Addressing is virtual-hosted on AWS and path-style elsewhere, unless given.
    ///
    /// - throws: ``S3LocationError`` when `url` is not `s3://` followed by a
    ///   valid bucket name, or the endpoint is not an http or https URL.
    public init(_ url: String, endpoint: URL? = nil, region: String = "us-east-1", addressing: Addressing? = nil) throws(S3LocationError) {
        guard url.hasPrefix("s3://") else { throw .notAnS3URL(url) }
        let rest = url.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        guard Self.isValidBucket(bucket) else { throw .invalidBucket(bucket) }
        var prefix = rest.dropFirst(bucket.count).drop { $0 == "/" }
        while prefix.hasSuffix("/") { prefix = prefix.dropLast() }
        guard !prefix.contains("//"), !prefix.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }) else {
            throw .invalidPrefix(String(prefix))
        }
        let endpoint = endpoint ?? URL(string: "https://s3.\(region).amazonaws.com")!
        guard let scheme = endpoint.scheme?.lowercased(), scheme == "http" || scheme == "https", endpoint.host != nil else {
            throw .invalidEndpoint(endpoint.absoluteString)
        }
        // Credentials in the URL would be in every message that names the location.
        guard endpoint.user == nil, endpoint.password == nil else { throw .credentialsInEndpoint }
        guard !region.isEmpty, region.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw .invalidRegion(region)
        }
        self.bucket = bucket
        self.prefix = String(prefix)
        self.endpoint = endpoint
        self.region = region
        self.addressing = addressing ?? (endpoint.host?.hasSuffix(".amazonaws.com") == true && !bucket.contains(".") ? .virtualHosted : .pathStyle)
    }

    /// `s3://BUCKET/PREFIX`, with the endpoint when it is not AWS's.
    public var description: String {
        let url = "s3://\(bucket)" + (prefix.isEmpty ? "" : "/" + prefix)
        return endpoint.host?.hasSuffix(".amazonaws.com") == true ? url : "\(url) at \(endpoint.absoluteString)"
    }

    /// The object key of `name`: the prefix, `/`, the name.
    func key(_ name: String) -> String { prefix.isEmpty ? name : prefix + "/" + name }

    /// The prefix every key of the backup begins with.
    var keyPrefix: String { prefix.isEmpty ? "" : prefix + "/" }

    /// Bucket names as S3 allows them: 3 to 63 lowercase letters, digits,
    /// `-` and `.`, beginning and ending with a letter or digit.
    static func isValidBucket(_ name: String) -> Bool {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-.")
        guard (3...63).contains(name.count), name.allSatisfy({ allowed.contains($0) }) else { return false }
        return name.first!.isLetter || name.first!.isNumber ? (name.last!.isLetter || name.last!.isNumber) : false
    }
}

/// Why an S3 location could not be used, with what to write instead.
public enum S3LocationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not a URL of the form `s3://BUCKET/PREFIX`.
    case notAnS3URL(String)
    /// Not a bucket name S3 allows.
    case invalidBucket(String)
    /// A prefix with an empty, `.` or `..` part.
    case invalidPrefix(String)
    /// The endpoint is not an http or https URL with a host.
    case invalidEndpoint(String)
    /// The endpoint holds a user name or password (`https://id:secret@host`).
    case credentialsInEndpoint
    /// A region that is not letters, digits, `-` and `_`.
    case invalidRegion(String)

    public var description: String {
        switch self {
        case let .notAnS3URL(url): "\(url) is not an S3 location: write s3://BUCKET/PREFIX."
        case let .invalidBucket(bucket): "\(bucket) is not a bucket name: use 3 to 63 lowercase letters, digits, '-' and '.'."
        case let .invalidPrefix(prefix): "\(prefix) is not a key prefix: write its parts separated by single '/', none of them '.' or '..'."
        case let .invalidEndpoint(endpoint): "\(endpoint) is not an endpoint: write http://HOST:PORT or https://HOST."
        case .credentialsInEndpoint: "The endpoint holds credentials: write it without them (https://HOST), and give the access key as AWS's tools read it."
        case let .invalidRegion(region): "\(region) is not a region name: write one such as us-east-1."
        }
    }
}

extension S3LocationError: DBCryptError {
    /// ``DBCryptErrorCategory/misuse``: a location written wrongly.
    public var category: DBCryptErrorCategory { .misuse }
}
