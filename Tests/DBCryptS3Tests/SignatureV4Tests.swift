import DBCryptCore
import Foundation
import XCTest
import DBCryptS3

/// ``SignatureV4`` against AWS's SigV4 test suite (the cases that apply to
/// S3's header-signed requests, in `Vectors/`, see its README) and against
/// the GET Object example of S3's own documentation.
final class SignatureV4Tests: XCTestCase {
    /// The committed cases: one folder each.
    private static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors")

    // MARK: - AWS's test suite

    func testEveryCommittedVectorSignsAsAWSExpects() throws {
        let folders = try FileManager.default.contentsOfDirectory(at: Self.vectors, includingPropertiesForKeys: [.isDirectoryKey])
            .filter { (try? $0.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        var run = 0
        for folder in folders {
            try check(folder)
            run += 1
        }
        XCTAssertEqual(run, folders.count, "every vector folder is a case that ran")
        XCTAssertEqual(folders.count, 31, "Vectors/ holds the 31 cases its README lists")
    }

    /// Signs one case's request and compares each stage with AWS's files,
    /// every failure naming the case.
    private func check(_ folder: URL) throws {
        let name = folder.lastPathComponent
        let vector = try Vector(folder)
        let context = vector.context
        // The committed cases are those whose expected output S3's rules
        // (no normalization, session token signed) also produce.
        XCTAssertFalse(context.omitSessionToken ?? false, "\(name): a case that leaves the session token unsigned is not S3's")
        if context.normalize {
            XCTAssertTrue(Vector.isNormal(vector.request.path), "\(name): its expected output needs path normalization, which S3 does not do")
        }

        let credentials = S3Credentials(accessKeyID: context.credentials.accessKeyId, secretAccessKey: context.credentials.secretAccessKey,
                                        sessionToken: context.credentials.token)
        let signer = SignatureV4(credentials: credentials, region: context.region, service: context.service)
        let date = try XCTUnwrap(ISO8601DateFormatter().date(from: context.timestamp), "\(name): timestamp \(context.timestamp)")

        XCTAssertEqual(signer.canonicalRequest(vector.request, date: date), try vector.expected("header-canonical-request.txt"),
                       "\(name): canonical request")
        XCTAssertEqual(signer.stringToSign(vector.request, date: date), try vector.expected("header-string-to-sign.txt"),
                       "\(name): string to sign")
        XCTAssertEqual(signer.signature(vector.request, date: date), try vector.expected("header-signature.txt"), "\(name): signature")

        // The signed request AWS expects holds each header the signer adds, with the same value.
        let signedRequest = try HTTPRequestText(vector.expected("header-signed-request.txt"))
        let added = signer.headers(signing: vector.request, date: date)
        XCTAssertEqual(added.map { $0.name.lowercased() }.filter { $0 == "authorization" }.count, 1, "\(name): one Authorization header")
        for (header, value) in added {
            let expected = signedRequest.headers.filter { $0.name.lowercased() == header.lowercased() }.map(\.value)
            XCTAssertEqual(expected, [value], "\(name): header \(header)")
        }
    }

    // MARK: - S3's own example

    /// "Signature Calculations for the Authorization Header: Transferring
    /// Payload in a Single Chunk", Example: GET Object (the first 10 bytes of
    /// test.txt in examplebucket), in S3's form: virtual-hosted bucket,
    /// `x-amz-content-sha256` and a `Range` header signed.
    func testS3DocumentationGetObjectExample() throws {
        let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        let credentials = S3Credentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
        let signer = SignatureV4(credentials: credentials, region: "us-east-1", service: "s3")
        let request = SignatureV4.Request(method: "GET", path: "/test.txt", query: [],
                                          headers: [("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9"),
                                                    ("x-amz-content-sha256", emptyHash)],
                                          payloadHash: emptyHash)
        let date = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z

        XCTAssertEqual(signer.canonicalRequest(request, date: date), """
            GET
            /test.txt

            host:examplebucket.s3.amazonaws.com
            range:bytes=0-9
            x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
            x-amz-date:20130524T000000Z

            host;range;x-amz-content-sha256;x-amz-date
            e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
            """)
        XCTAssertEqual(signer.stringToSign(request, date: date), """
            AWS4-HMAC-SHA256
            20130524T000000Z
            20130524/us-east-1/s3/aws4_request
            7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972
            """)
        XCTAssertEqual(signer.signature(request, date: date), "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        let headers = signer.headers(signing: request, date: date)
        XCTAssertEqual(headers.map(\.name), ["X-Amz-Date", "Authorization"])
        XCTAssertEqual(headers.first { $0.name == "X-Amz-Date" }?.value, "20130524T000000Z")
        XCTAssertEqual(headers.first { $0.name == "Authorization" }?.value,
                       "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                           + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                           + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    // MARK: - Parts

    func testTheSigningKeyFollowsTheDayAcrossMidnight() {
        // The key kept for one day must not sign the next: the same request
        // signed at 23:59:59 and 00:00:00 again matches a fresh signer's.
        let credentials = S3Credentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
        let request = SignatureV4.Request(method: "GET", path: "/", headers: [("host", "example.com")], payloadHash: "UNSIGNED-PAYLOAD")
        let signer = SignatureV4(credentials: credentials, region: "us-east-1", service: "s3")
        for seconds in [1_369_353_599.0, 1_369_353_600, 1_369_353_599, 1_369_439_999] {
            let date = Date(timeIntervalSince1970: seconds)
            let fresh = SignatureV4(credentials: credentials, region: "us-east-1", service: "s3")
            XCTAssertEqual(signer.signature(request, date: date), fresh.signature(request, date: date), "at \(seconds)")
        }
        XCTAssertNotEqual(signer.signature(request, date: Date(timeIntervalSince1970: 1_369_353_599)),
                          signer.signature(request, date: Date(timeIntervalSince1970: 1_369_353_600)))
    }

    func testTimestampsAreUTCWhateverTheDate() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        var generator = SystemRandomNumberGenerator()
        let edges: [Double] = [0, -1, 951_782_399, 951_782_400, 951_868_800, 4_107_542_399, 1_369_353_600.999, -86_400.5]
        let random = (0..<2_000).map { _ in Double(Int64.random(in: -2_208_988_800...4_102_444_800, using: &generator)) }
        for seconds in edges + random {
            let date = Date(timeIntervalSince1970: seconds)
            XCTAssertEqual(SignatureV4.timestamp(date), formatter.string(from: date), "at \(seconds) s since 1970")
        }
    }

    func testPercentEncodingKeepsOnlyUnreservedCharacters() {
        XCTAssertEqual(SignatureV4.percentEncoded("AZaz09-._~", keepingSlash: false), "AZaz09-._~")
        XCTAssertEqual(SignatureV4.percentEncoded("a b+c/d=e&f%g*h", keepingSlash: false), "a%20b%2Bc%2Fd%3De%26f%25g%2Ah")
        XCTAssertEqual(SignatureV4.percentEncoded("gen/0001/wal 1", keepingSlash: true), "gen/0001/wal%201")
        XCTAssertEqual(SignatureV4.percentEncoded("\u{1234}é", keepingSlash: true), "%E1%88%B4%C3%A9")
    }

    // MARK: - Secrets

    func testNoSecretAppearsInADescription() {
        let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
        let token = "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267"
        let credentials = S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: secret, sessionToken: token)
        let signer = SignatureV4(credentials: credentials, region: "us-east-1", service: "s3")
        // A signature made first, so that the signer holds a derived key.
        _ = signer.signature(SignatureV4.Request(method: "GET", path: "/", headers: [("host", "h")], payloadHash: "UNSIGNED-PAYLOAD"), date: Date())
        var dumped = ""
        dump(signer, to: &dumped)
        var dumpedCredentials = ""
        dump(credentials, to: &dumpedCredentials)
        let texts = [String(describing: signer), String(reflecting: signer), dumped,
                     String(describing: credentials), String(reflecting: credentials), dumpedCredentials]
        for text in texts {
            XCTAssertFalse(text.contains(secret), "the secret in: \(text)")
            XCTAssertFalse(text.contains(token), "the session token in: \(text)")
            XCTAssertFalse(text.contains("AWS4wJal"), "the key material in: \(text)")
        }
        XCTAssertTrue(String(describing: signer).contains("AKIDEXAMPLE"), "the access key ID names the signer")
    }
}

// MARK: - Reading the vectors

/// One case of AWS's test suite: its context, its request as the signer
/// takes it, and the files of expected output.
private struct Vector {
    /// `context.json`: what to sign with.
    struct Context: Decodable {
        struct Credentials: Decodable {
            var accessKeyId: String
            var secretAccessKey: String
            var token: String?
        }

        var credentials: Credentials
        var region: String
        var service: String
        var timestamp: String
        var normalize: Bool
        var signBody: Bool
        var omitSessionToken: Bool?
    }

    let folder: URL
    let context: Context
    let request: SignatureV4.Request

    /// Reads `folder`'s `context.json` and `request.txt`.
    ///
    /// The suite writes a request's path decoded (`/example space/`, raw
    /// UTF-8) and its query as sent (`%E1%88%B4=Value1`, or raw): the path
    /// goes on the wire encoded once, as S3's client sends an object key, and
    /// the query is decoded into the unencoded pairs the signer takes. When
    /// `sign_body` is set, `x-amz-content-sha256` is signed, as S3's client
    /// always does.
    init(_ folder: URL) throws {
        self.folder = folder
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        context = try decoder.decode(Context.self, from: Data(contentsOf: folder.appendingPathComponent("context.json")))
        let text = try String(decoding: Data(contentsOf: folder.appendingPathComponent("request.txt")), as: UTF8.self)
        let http = try HTTPRequestText(text)

        let target = http.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let rawPath = String(target[0])
        let path = SignatureV4.percentEncoded(rawPath.removingPercentEncoding ?? rawPath, keepingSlash: true)
        var query: [(name: String, value: String)] = []
        if target.count == 2 {
            for parameter in target[1].split(separator: "&") {
                let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let decode = { (part: Substring) in String(part).removingPercentEncoding ?? String(part) }
                query.append((decode(parts[0]), parts.count == 2 ? decode(parts[1]) : ""))
            }
        }
        let payloadHash = Hex.encode(Array(http.body.utf8).withUnsafeBytes { sha256($0) }!)
        var headers = http.headers
        if context.signBody { headers.append(("x-amz-content-sha256", payloadHash)) }
        request = SignatureV4.Request(method: http.method, path: path, query: query, headers: headers, payloadHash: payloadHash)
    }

    /// The text of expected-output file `name`, byte for byte.
    func expected(_ name: String) throws -> String {
        try String(decoding: Data(contentsOf: folder.appendingPathComponent(name)), as: UTF8.self)
    }

    /// Whether normalizing `path` would leave it as it is: no empty, `.` or
    /// `..` segment (a trailing slash aside).
    static func isNormal(_ path: String) -> Bool {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        return path.hasPrefix("/") && !segments.dropLast().contains("") && !segments.contains(".") && !segments.contains("..")
    }
}

/// An HTTP/1.1 request as the suite writes it: a request line, header lines
/// (a name repeated, a value folded onto lines that begin with a blank), an
/// empty line, the body.
private struct HTTPRequestText {
    var method: String
    var target: String
    var headers: [(name: String, value: String)] = []
    var body = ""

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    init(_ text: String) throws {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
        let requestLine = lines.removeFirst()
        // The target may hold spaces (`/example space/`): the method ends at
        // the first space, the version starts after the last.
        guard let first = requestLine.firstIndex(of: " "), let last = requestLine.lastIndex(of: " "), first < last else {
            throw Malformed(description: "request line \(requestLine)")
        }
        method = String(requestLine[..<first])
        target = String(requestLine[requestLine.index(after: first)..<last])
        while !lines.isEmpty {
            let line = lines.removeFirst()
            if line.isEmpty {
                body = lines.joined(separator: "\n")
                break
            }
            if line.first == " " || line.first == "\t" {
                guard !headers.isEmpty else { throw Malformed(description: "a folded line before any header") }
                headers[headers.count - 1].value += line
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { throw Malformed(description: "header line \(line)") }
            headers.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
        }
    }
}
