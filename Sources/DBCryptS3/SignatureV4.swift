import DBCryptCore
import Foundation
import Synchronization

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`) for requests authenticated
/// in the `Authorization` header, as S3 takes them: the canonical URI is the
/// path exactly as sent (S3 neither normalizes `.`/`..` segments nor encodes
/// the path a second time), and the session token, when there is one, is
/// signed like any other header.
///
/// ```swift
/// let signer = SignatureV4(credentials: credentials, region: "us-east-1", service: "s3")
/// let request = SignatureV4.Request(method: "GET", path: "/bucket/key", query: [],
///                                   headers: [("host", "s3.example.com"), ("x-amz-content-sha256", hash)],
///                                   payloadHash: hash)
/// for (name, value) in signer.headers(signing: request, date: Date()) { urlRequest.setValue(value, forHTTPHeaderField: name) }
/// ```
///
/// The steps (AWS's "Create a signed AWS API request"):
///
/// 1. canonical request: method, canonical URI, canonical query, canonical
///    headers (each `name:value` and a newline), signed header names joined
///    with `;`, payload hash, joined with newlines;
/// 2. string to sign: `AWS4-HMAC-SHA256`, the timestamp, the scope
///    `yyyyMMdd/region/service/aws4_request`, hex SHA-256 of the canonical
///    request, joined with newlines;
/// 3. signing key: HMAC-SHA256 chained from `"AWS4" + secret` over the day,
///    the region, the service and `aws4_request`;
/// 4. signature: hex HMAC-SHA256 of the string to sign under that key.
///
/// The signing key depends only on the day, so the last one is kept and
/// reused until the day changes. Neither the secret nor a key derived from
/// it appears in the signer's description or mirror.
package struct SignatureV4: Sendable, CustomStringConvertible, CustomReflectable {
    /// A request as it will be sent: `path` is the canonical URI exactly as
    /// on the wire (already percent-encoded; S3 does not normalize paths or
    /// double-encode), `query` unencoded name/value pairs, `headers` every
    /// header to sign (host among them), `payloadHash` the hex SHA-256 of the
    /// body or `UNSIGNED-PAYLOAD`.
    ///
    /// `X-Amz-Date`, `X-Amz-Security-Token` and `Authorization` are the
    /// signer's to add: any of them in `headers` is ignored.
    package struct Request: Sendable {
        /// The HTTP method, upper case: `GET`, `PUT`, `HEAD`, `DELETE`, `POST`.
        package var method: String
        /// The path as sent, percent-encoded (``SignatureV4/percentEncoded(_:keepingSlash:)``
        /// with `keepingSlash: true` for an object key); empty means `/`.
        package var path: String
        /// The query's parameters, not encoded, in any order; a parameter
        /// without a value (`?uploads`) has the value `""`.
        package var query: [(name: String, value: String)]
        /// The headers to sign, names in any case, a name possibly repeated.
        package var headers: [(name: String, value: String)]
        /// The hex SHA-256 of the body, or `UNSIGNED-PAYLOAD`.
        package var payloadHash: String

        /// A request from its parts (see the type's description for each).
        package init(method: String, path: String, query: [(name: String, value: String)] = [],
                     headers: [(name: String, value: String)], payloadHash: String) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.payloadHash = payloadHash
        }
    }

    /// The name of the algorithm, first in the string to sign and the `Authorization` header.
    package static let algorithm = "AWS4-HMAC-SHA256"

    private let credentials: S3Credentials
    /// The region requests are signed for (`us-east-1`; radosgw takes its zone group's name).
    package let region: String
    /// The service requests are signed for: `s3`.
    package let service: String
    private let cache = SigningKeyCache()

    /// A signer for requests to `service` in `region` with `credentials`.
    package init(credentials: S3Credentials, region: String, service: String) {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    // MARK: - Signing

    /// The canonical request of `request` sent at `date`: what the signature
    /// covers, including the `x-amz-date` (and `x-amz-security-token`)
    /// headers that ``headers(signing:date:)`` adds.
    package func canonicalRequest(_ request: Request, date: Date) -> String {
        canonical(request, timestamp: Self.timestamp(date)).text
    }

    /// The string to sign for `request` sent at `date`: algorithm,
    /// timestamp, scope and the hash of the canonical request.
    package func stringToSign(_ request: Request, date: Date) -> String {
        let timestamp = Self.timestamp(date)
        return stringToSign(canonical: canonical(request, timestamp: timestamp).text, timestamp: timestamp)
    }

    /// The signature of `request` sent at `date`: 64 lowercase hex digits.
    package func signature(_ request: Request, date: Date) -> String {
        signing(request, date: date).signature
    }

    /// The headers to add to the request: `X-Amz-Date`,
    /// `X-Amz-Security-Token` when the credentials have one, `Authorization`.
    package func headers(signing request: Request, date: Date) -> [(name: String, value: String)] {
        let signed = signing(request, date: date)
        var headers: [(name: String, value: String)] = [("X-Amz-Date", signed.timestamp)]
        if let token = sessionToken { headers.append(("X-Amz-Security-Token", token)) }
        headers.append(("Authorization", "\(Self.algorithm) Credential=\(credentials.accessKeyID)/\(scope(day: Self.day(of: signed.timestamp))), "
            + "SignedHeaders=\(signed.signedHeaders), Signature=\(signed.signature)"))
        return headers
    }

    /// Everything one signature needs, computed once: the timestamp, the
    /// signed header names and the signature.
    private func signing(_ request: Request, date: Date) -> (timestamp: String, signedHeaders: String, signature: String) {
        let timestamp = Self.timestamp(date)
        let (canonical, signedHeaders) = canonical(request, timestamp: timestamp)
        let text = stringToSign(canonical: canonical, timestamp: timestamp)
        let key = cache.key(day: Self.day(of: timestamp)) { deriveKey(day: $0) }
        return (timestamp, signedHeaders, Hex.encode(Self.mac(key, Array(text.utf8))))
    }

    /// The string to sign around a canonical request.
    private func stringToSign(canonical: String, timestamp: String) -> String {
        [Self.algorithm, timestamp, scope(day: Self.day(of: timestamp)), Self.hexSHA256(canonical)].joined(separator: "\n")
    }

    /// `yyyyMMdd/region/service/aws4_request`: what a signature is valid for.
    private func scope(day: String) -> String { "\(day)/\(region)/\(service)/aws4_request" }

    /// The session token as the header carries it.
    private var sessionToken: String? {
        credentials.sessionToken.map { token in token.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
    }

    // MARK: - Canonical request

    /// Headers the signer adds itself, so a caller's copy is left out.
    private static let signerHeaders: Set<String> = ["x-amz-date", "x-amz-security-token", "authorization"]

    /// The canonical request and its signed header names (`host;x-amz-date`).
    private func canonical(_ request: Request, timestamp: String) -> (text: String, signedHeaders: String) {
        // Canonical headers: names lower-cased, each value trimmed and its
        // runs of spaces collapsed, the values of a repeated name joined with
        // "," in the order given, names sorted (byte order: all are ASCII).
        var values: [String: [String]] = [:]
        for (name, value) in request.headers {
            let name = name.lowercased()
            guard !Self.signerHeaders.contains(name) else { continue }
            values[name, default: []].append(Self.canonicalValue(value))
        }
        values["x-amz-date"] = [timestamp]
        if let token = sessionToken { values["x-amz-security-token"] = [Self.canonicalValue(token)] }
        let names = values.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        let headerLines = names.map { "\($0):\(values[$0]!.joined(separator: ","))\n" }.joined()
        let signedHeaders = names.joined(separator: ";")

        // Canonical query: each name and value encoded, pairs sorted by
        // encoded name then encoded value, "name=value" joined with "&".
        let query = request.query
            .map { (Self.percentEncoded($0.name, keepingSlash: false), Self.percentEncoded($0.value, keepingSlash: false)) }
            .sorted { a, b in
                a.0 == b.0 ? Array(a.1.utf8).lexicographicallyPrecedes(Array(b.1.utf8)) : Array(a.0.utf8).lexicographicallyPrecedes(Array(b.0.utf8))
            }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")

        let path = request.path.isEmpty ? "/" : request.path
        let text = [request.method, path, query, headerLines, signedHeaders, request.payloadHash].joined(separator: "\n")
        return (text, signedHeaders)
    }

    /// A header value as signed: leading and trailing blanks removed, each
    /// run of spaces inside made one space (a folded value's line breaks
    /// count as blanks).
    private static func canonicalValue(_ value: String) -> String {
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
        var out: [UInt8] = []
        var pendingSpace = false
        for byte in value.utf8 {
            if blank(byte) {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.append(0x20) }
                pendingSpace = false
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// RFC 3986 percent-encoding as SigV4 wants it: the unreserved
    /// characters `A-Z a-z 0-9 - . _ ~` are kept, `/` too when
    /// `keepingSlash` (an object key in a path), and every other UTF-8 byte
    /// becomes `%XX` in upper-case hex (a space is `%20`, never `+`).
    package static func percentEncoded(_ text: String, keepingSlash: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            case UInt8(ascii: "/") where keepingSlash:
                out.append(byte)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(contentsOf: Hex.encode([byte], uppercase: true).utf8)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: - Timestamps

    /// `date` as SigV4 writes it, `yyyyMMdd'T'HHmmss'Z'` in UTC
    /// (`20130524T000000Z`), computed from the seconds since 1970 so that no
    /// locale, calendar or time zone setting can change it.
    package static func timestamp(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        var (days, secondOfDay) = seconds.quotientAndRemainder(dividingBy: 86_400)
        if secondOfDay < 0 {
            days -= 1
            secondOfDay += 86_400
        }
        // Days since 1970-01-01 to a proleptic Gregorian date, counted in
        // 400-year eras of 146,097 days whose years start on March 1st, so
        // that the leap day is the last day of a year.
        let shifted = days + 719_468  // days from 0000-03-01 to 1970-01-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return padded(year, 4) + padded(month, 2) + padded(day, 2) + "T"
            + padded(secondOfDay / 3_600, 2) + padded(secondOfDay / 60 % 60, 2) + padded(secondOfDay % 60, 2) + "Z"
    }

    /// The day part (`yyyyMMdd`) of a timestamp.
    private static func day(of timestamp: String) -> String { String(timestamp.prefix(8)) }

    /// `value` in decimal, zero-padded to `width` digits.
    private static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count < width ? String(repeating: "0", count: width - digits.count) + digits : digits
    }

    // MARK: - Keys and hashes

    /// The signing key of `day`: HMAC-SHA256 chained from `"AWS4" + secret`
    /// over the day, the region, the service and `aws4_request`. Every
    /// intermediate key is wiped as soon as the next one is made; the result
    /// keeps only HMAC states.
    private func deriveKey(day: String) -> HMACKey {
        var material: [UInt8] = []
        credentials.secretAccessKey.withUnsafeBytes { secret in
            // Reserved first, so that no growth leaves a copy of the secret behind.
            material.reserveCapacity(4 + secret.count)
            material.append(contentsOf: "AWS4".utf8)
            material.append(contentsOf: secret)
        }
        for part in [day, region, service, "aws4_request"] {
            var next = material.withUnsafeBytes { Self.mac(HMACKey($0), Array(part.utf8)) }
            SecretBytes.wipe(&material)
            swap(&material, &next)
        }
        defer { SecretBytes.wipe(&material) }
        return material.withUnsafeBytes { HMACKey($0) }
    }

    /// HMAC-SHA256 of `message` under `key`. The primitive fails only when
    /// memory runs out, where Swift itself would trap: so does this.
    private static func mac(_ key: HMACKey, _ message: [UInt8]) -> [UInt8] {
        guard let mac = message.withUnsafeBytes({ key.mac($0) }) else { preconditionFailure("HMAC-SHA256 failed: out of memory") }
        return mac
    }

    /// Lowercase hex SHA-256 of `text`'s UTF-8 bytes.
    private static func hexSHA256(_ text: String) -> String {
        guard let digest = Array(text.utf8).withUnsafeBytes({ sha256($0) }) else { preconditionFailure("SHA-256 failed: out of memory") }
        return Hex.encode(digest)
    }

    // MARK: - Description

    /// The access key ID, region and service: never the secret or the token.
    package var description: String { "SignatureV4(\(credentials.accessKeyID), \(region)/\(service))" }

    /// The region and service only, so `dump` and debuggers show nothing of the credentials or keys.
    package var customMirror: Mirror { Mirror(self, children: ["region": region, "service": service], displayStyle: .struct) }
}

/// The signing key of the last day signed for, shared by the copies of one
/// signer: a key derived from the secret stays in HMAC states, never in a
/// plain array.
private final class SigningKeyCache: Sendable {
    private let slot = Mutex<(day: String, key: HMACKey)?>(nil)

    /// The key of `day`: the one kept, or `derive(day)` kept in its place.
    func key(day: String, derive: (String) -> HMACKey) -> HMACKey {
        slot.withLock { slot in
            if let slot, slot.day == day { return slot.key }
            let key = derive(day)
            slot = (day, key)
            return key
        }
    }
}
