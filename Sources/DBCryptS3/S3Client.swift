import DBCrypt
import DBCryptCore
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Signed requests to one bucket through Foundation's `URLSession`, each
/// retried on the failures that pass (a 5xx, `SlowDown`, a reset or timed
/// out connection) with exponential backoff and jitter, up to a bound.
/// Synchronous: a backup's rounds run on a queue of their own.
final class S3Client: Sendable {
    /// A response: its status, headers (names lowercased) and body.
    struct Response: Sendable {
        var status: Int
        var headers: [String: String]
        var body: Data
        /// How many times the request was sent: more than 1 when an earlier
        /// attempt failed, and may yet have reached the server.
        var attempts = 1

        /// The error document's `Code` (`NoSuchKey`, `AccessDenied`...), if any.
        var errorCode: String? { S3XML(body)?.first("Code") }
    }

    let location: S3Location
    /// The access key ID, for messages (never the secret).
    let accessKeyID: String
    private let signer: SignatureV4
    private let session: URLSession
    private let maximumAttempts: Int
    private let timeout: Duration
    /// Requests sent, by kind (`PUT`, `GET`, `LIST`, `DELETE`, `POST`),
    /// retries included: what a bill counts.
    private let sent = Mutex<[String: Int]>([:])

    init(location: S3Location, credentials: S3Credentials, maximumAttempts: Int, timeout: Duration) {
        self.location = location
        accessKeyID = credentials.accessKeyID
        signer = SignatureV4(credentials: credentials, region: location.region, service: "s3")
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        session = URLSession(configuration: configuration)
        self.maximumAttempts = max(1, maximumAttempts)
        self.timeout = timeout
    }

    deinit { session.finishTasksAndInvalidate() }

    /// Sends a request for `key` (nil: the bucket itself) and returns the
    /// response that ended it: a success, or a failure that does not pass
    /// by retrying (or the last, after ``maximumAttempts``). Its
    /// ``Response/attempts`` tells whether an earlier attempt may have
    /// reached the server. `retrying` names more responses to retry (a 200
    /// whose body is an error, which S3 sends for a long CompleteMultipartUpload).
    ///
    /// - throws: ``BackupError/storageFailed(location:reason:)`` when the
    ///   service could not be reached on any attempt.
    func send(_ method: String, key: String?, query: [(name: String, value: String)] = [], headers: [(name: String, value: String)] = [],
              body: Data = Data(), retrying: (Response) -> Bool = { _ in false }) throws -> Response {
        var attempt = 0
        while true {
            attempt += 1
            do {
                var response = try once(method, key: key, query: query, headers: headers, body: body)
                response.attempts = attempt
                if !(Self.passes(response) || retrying(response)) || attempt >= maximumAttempts { return response }
            } catch {
                guard Self.passes(error), attempt < maximumAttempts else {
                    throw BackupError.storageFailed(location: describe(key), reason: Self.reason(error, attempts: attempt))
                }
            }
            backOff(attempt)
        }
    }

    /// Requests sent so far, by kind (`LIST` is a GET of the bucket).
    var requestCounts: [String: Int] { sent.withLock { $0 } }

    /// Where `key` is, for messages: `s3://BUCKET/KEY`.
    func describe(_ key: String?) -> String { "s3://\(location.bucket)" + (key.map { "/" + $0 } ?? "") }

    /// One attempt: signed now, sent, waited for.
    private func once(_ method: String, key: String?, query: [(name: String, value: String)], headers: [(name: String, value: String)],
                      body: Data) throws(URLError) -> Response {
        let kind = key == nil && method == "GET" ? "LIST" : method
        sent.withLock { $0[kind, default: 0] += 1 }
        let (url, host, path) = address(key: key, query: query)
        let payloadHash = body.withUnsafeBytes { sha256($0) }.map { Hex.encode($0) } ?? ""
        var signed = headers
        signed.append(("host", host))
        signed.append(("x-amz-content-sha256", payloadHash))
        let request = SignatureV4.Request(method: method, path: path, query: query, headers: signed, payloadHash: payloadHash)
        var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout.timeInterval)
        urlRequest.httpMethod = method
        for (name, value) in signed where name != "host" { urlRequest.setValue(value, forHTTPHeaderField: name) }
        for (name, value) in signer.headers(signing: request, date: Date()) { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if !body.isEmpty || method == "PUT" || method == "POST" { urlRequest.httpBody = body }

        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<Response, URLError>?>(nil)
        let task = session.dataTask(with: urlRequest) { data, response, error in
            let outcome: Result<Response, URLError>
            if let http = response as? HTTPURLResponse, error == nil {
                var headers: [String: String] = [:]
                for (name, value) in http.allHeaderFields {
                    if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
                }
                outcome = .success(Response(status: http.statusCode, headers: headers, body: data ?? Data()))
            } else {
                outcome = .failure((error as? URLError) ?? URLError(.unknown))
            }
            result.withLock { $0 = outcome }
            done.signal()
        }
        task.resume()
        done.wait()
        return try result.withLock { $0! }.get()
    }

    /// The URL of `key`, the Host header it is sent with, and its path as signed.
    private func address(key: String?, query: [(name: String, value: String)]) -> (URL, String, String) {
        let endpoint = location.endpoint
        let scheme = endpoint.scheme!.lowercased()
        let defaultPort = scheme == "https" ? 443 : 80
        var host = endpoint.host!
        if location.addressing == .virtualHosted { host = location.bucket + "." + host }
        if let port = endpoint.port, port != defaultPort { host += ":\(port)" }
        var base = endpoint.path
        while base.hasSuffix("/") { base.removeLast() }
        var path = base
        if location.addressing == .pathStyle { path += "/" + location.bucket }
        path += "/" + (key.map { SignatureV4.percentEncoded($0, keepingSlash: true) } ?? "")
        let queryText = query.map { SignatureV4.percentEncoded($0.name, keepingSlash: false) + "=" + SignatureV4.percentEncoded($0.value, keepingSlash: false) }
            .joined(separator: "&")
        let url = URL(string: "\(scheme)://\(host)\(path)" + (queryText.isEmpty ? "" : "?" + queryText))!
        return (url, host, path)
    }

    /// Waits before attempt `attempt + 1`: 250 ms doubled each time, up to
    /// 8 s, a random part of it (full jitter above half), so that writers
    /// that failed together do not retry together.
    private func backOff(_ attempt: Int) {
        let ceiling = min(8.0, 0.25 * pow(2.0, Double(attempt - 1)))
        let wait = ceiling / 2 + Double.random(in: 0...(ceiling / 2))
        usleep(useconds_t(wait * 1_000_000))
    }

    /// Whether a response is a failure that passes: a 5xx but 501 Not
    /// Implemented (503 `SlowDown` among them), a 429, or S3's `RequestTimeout`.
    private static func passes(_ response: Response) -> Bool {
        (response.status >= 500 && response.status != 501) || response.status == 429 || (response.status == 400 && response.errorCode == "RequestTimeout")
    }

    /// Whether a connection failure passes: a reset, refused or timed-out connection.
    private static func passes(_ error: URLError) -> Bool {
        switch error.code {
        case .timedOut, .cannotConnectToHost, .networkConnectionLost, .notConnectedToInternet, .cannotLoadFromNetwork,
             .badServerResponse, .resourceUnavailable, .dnsLookupFailed, .unknown:
            true
        default:
            false
        }
    }

    private static func reason(_ error: URLError, attempts: Int) -> String {
        let what = switch error.code {
        case .timedOut: "the request timed out"
        case .cannotConnectToHost: "the connection was refused"
        case .networkConnectionLost: "the connection was lost"
        case .cannotFindHost, .dnsLookupFailed: "the endpoint's host name does not resolve"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
             .serverCertificateHasUnknownRoot, .clientCertificateRejected:
            "the TLS connection failed (check the endpoint's certificate)"
        default: error.localizedDescription
        }
        return attempts > 1 ? "\(what) (\(attempts) attempts)" : what
    }
}
