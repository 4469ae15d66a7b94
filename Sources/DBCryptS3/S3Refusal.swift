import DBCrypt
import Foundation

/// Why an S3 service refused a request, read from its response, and the
/// ``BackupError`` that says it in words an operator acts on. The error
/// document's own message is not repeated: it may quote the request.
struct S3Refusal {
    let status: Int
    let code: String?
    /// The service's clock, when it said (`ServerTime`, or the `Date` header).
    let serverTime: Date?
    /// The bucket's region, when the service said (`x-amz-bucket-region`, `Region`).
    let bucketRegion: String?
    let accessKeyID: String
    let bucket: String
    let region: String
    let operation: String

    init(_ response: S3Client.Response, credentials accessKeyID: String, bucket: String, region: String, operation: String) {
        let document = S3XML(response.body)
        status = response.status
        code = document?.first("Code")
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let plainISO = ISO8601DateFormatter()
        serverTime = document?.first("ServerTime").flatMap { iso.date(from: $0) ?? plainISO.date(from: $0) }
            ?? response.headers["date"].flatMap(Self.httpDate)
        bucketRegion = response.headers["x-amz-bucket-region"] ?? document?.first("Region")
        self.accessKeyID = accessKeyID
        self.bucket = bucket
        self.region = region
        self.operation = operation
    }

    /// The error, about `location`.
    func error(at location: String) -> BackupError {
        let named = code.map { " (\($0))" } ?? " (HTTP \(status))"
        switch (status, code) {
        case (_, "SignatureDoesNotMatch"):
            return .storageRefused(location: location, reason: "the secret access key is not the one of access key \(accessKeyID)\(named): check the credentials")
        case (_, "InvalidAccessKeyId"):
            return .storageRefused(location: location, reason: "the service knows no access key \(accessKeyID)\(named): check the credentials")
        case (_, "RequestTimeTooSkewed"):
            let off = serverTime.map { Int((Date().timeIntervalSince($0) / 60).rounded()) }
            let clock = off.map { "this machine's clock is \(abs($0)) minutes \($0 > 0 ? "ahead of" : "behind") the service's" }
                ?? "this machine's clock is too far off the service's"
            return .storageRefused(location: location, reason: "\(clock)\(named): set the clock right (NTP) and try again")
        case (_, "QuotaExceeded"), (_, "EntityTooLarge"), (507, _):
            return .destinationFull(location: location)
        case (_, "AccessDenied"), (_, "AllAccessDisabled"), (403, nil):
            return .storageRefused(location: location, reason: "access key \(accessKeyID) may not \(operation) there\(named): check the user's permissions and the bucket's policy")
        case (_, "NoSuchBucket"):
            return .storageRefused(location: location, reason: "there is no bucket \(bucket)\(named): create it first, or check the endpoint")
        case (_, "PermanentRedirect"), (_, "AuthorizationHeaderMalformed"), (_, "IllegalLocationConstraintException"), (301, _):
            let there = bucketRegion.map { "region \($0)" } ?? "another region"
            return .storageRefused(location: location, reason: "the bucket is in \(there), not \(region)\(named): give its region (AWS_REGION)")
        case (_, "InvalidBucketName"):
            return .storageRefused(location: location, reason: "the service does not accept the bucket name \(bucket)\(named)")
        default:
            return .storageFailed(location: location, reason: "the service answered HTTP \(status)\(code.map { " \($0)" } ?? "")")
        }
    }

    /// An HTTP `Date` header (RFC 7231's IMF-fixdate).
    private static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
