import DBCryptCore
import Foundation

/// The access key that signs requests to an S3 service: an access key ID,
/// its secret, and for temporary credentials a session token. The secret
/// and the token are kept in memory that is wiped when released, and never
/// appear in a description, a message or a log line.
///
/// ```swift
/// let credentials = try S3Credentials.fromEnvironment()
/// ```
public struct S3Credentials: Sendable, CustomStringConvertible {
    /// The access key ID: not a secret (it appears in every request).
    public let accessKeyID: String
    /// The secret access key's bytes.
    let secretAccessKey: SecretBytes
    /// The session token of temporary credentials.
    let sessionToken: SecretBytes?

    /// Credentials from their three parts.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.init(accessKeyID: accessKeyID, secret: SecretBytes(secretAccessKey.utf8), token: sessionToken.map { SecretBytes($0.utf8) })
    }

    init(accessKeyID: String, secret: SecretBytes, token: SecretBytes?) {
        self.accessKeyID = accessKeyID
        secretAccessKey = secret
        sessionToken = token
    }

    /// The credentials AWS's tools would use: `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` when the first two
    /// are set, else profile `AWS_PROFILE` (default `default`) of the
    /// shared credentials file (`AWS_SHARED_CREDENTIALS_FILE`, default
    /// `~/.aws/credentials`). The secret goes from the environment or the
    /// file into wiped memory, never through a `String`.
    ///
    /// - throws: ``S3CredentialsError``: none found, half set, or a file
    ///   that cannot be read or lacks the profile.
    public static func fromEnvironment() throws(S3CredentialsError) -> S3Credentials {
        let id = environment("AWS_ACCESS_KEY_ID")
        let secret = environmentSecret("AWS_SECRET_ACCESS_KEY")
        switch (id, secret) {
        case let (id?, secret?):
            return S3Credentials(accessKeyID: id, secret: secret, token: environmentSecret("AWS_SESSION_TOKEN"))
        case (_?, nil): throw .incomplete(source: "the environment", missing: "AWS_SECRET_ACCESS_KEY")
        case (nil, _?): throw .incomplete(source: "the environment", missing: "AWS_ACCESS_KEY_ID")
        case (nil, nil):
            let path = environment("AWS_SHARED_CREDENTIALS_FILE") ?? environment("HOME").map { $0 + "/.aws/credentials" }
            guard let path, access(path, F_OK) == 0 else { throw .noneFound }
            return try fromFile(path, profile: profile)
        }
    }

    /// The profile AWS's tools read: `AWS_PROFILE` when it is set and not
    /// empty, else `default`.
    public static var profile: String { environment("AWS_PROFILE") ?? "default" }

    /// Profile `profile` of the AWS shared credentials file at `path`
    /// (`[profile]` sections of `aws_access_key_id`,
    /// `aws_secret_access_key` and `aws_session_token`), which may also be
    /// a service credential (systemd's `LoadCredential=`).
    ///
    /// - throws: ``S3CredentialsError/unreadable(path:reason:)``,
    ///   ``S3CredentialsError/noProfile(path:profile:)`` or
    ///   ``S3CredentialsError/incomplete(source:missing:)``.
    public static func fromFile(_ path: String, profile: String = "default") throws(S3CredentialsError) -> S3Credentials {
        let contents: SecretBytes
        do throws(FileError) {
            contents = try WholeFile.read(streamAt: path, limit: 1 << 20)
        } catch {
            throw .unreadable(path: path, reason: error.reason)
        }
        return try contents.withUnsafeBytes { parse($0, path: path, profile: profile) }.get()
    }

    /// Profile `profile` of `text`, written as AWS's shared credentials
    /// file (``fromFile(_:profile:)``): what a key store keeps for them.
    /// `source` names where the text came from, in errors.
    ///
    /// - throws: ``S3CredentialsError/noProfile(path:profile:)`` or
    ///   ``S3CredentialsError/incomplete(source:missing:)``.
    public init(credentialsText text: UnsafeRawBufferPointer, source: String, profile: String = "default") throws(S3CredentialsError) {
        self = try Self.parse(text, path: source, profile: profile).get()
    }

    /// The credentials of `profile` in the credentials file `bytes`, read from `path`.
    private static func parse(_ bytes: UnsafeRawBufferPointer, path: String, profile: String) -> Result<S3Credentials, S3CredentialsError> {
        do throws(S3CredentialsError) {
            var inProfile = false
            var found = false
            var id: String?, secret: SecretBytes?, token: SecretBytes?
            for rawLine in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
                let line = trimmed(rawLine)
                guard let first = line.first, first != UInt8(ascii: "#"), first != UInt8(ascii: ";") else { continue }
                if first == UInt8(ascii: "["), line.last == UInt8(ascii: "]") {
                    var name = String(decoding: line.dropFirst().dropLast(), as: UTF8.self).trimmingCharacters(in: .whitespaces)
                    if name.hasPrefix("profile ") { name = String(name.dropFirst(8)).trimmingCharacters(in: .whitespaces) }
                    inProfile = name == profile
                    found = found || inProfile
                    continue
                }
                guard inProfile, let equals = line.firstIndex(of: UInt8(ascii: "=")) else { continue }
                let name = String(decoding: trimmed(line[..<equals]), as: UTF8.self).lowercased()
                let value = trimmed(line[(equals + 1)...])
                switch name {
                case "aws_access_key_id": id = String(decoding: value, as: UTF8.self)
                case "aws_secret_access_key": secret = SecretBytes(value)
                case "aws_session_token": token = SecretBytes(value)
                default: break
                }
            }
            guard found else { throw .noProfile(path: path, profile: profile) }
            guard let id, !id.isEmpty else { throw .incomplete(source: path, missing: "aws_access_key_id") }
            guard let secret, secret.count > 0 else { throw .incomplete(source: path, missing: "aws_secret_access_key") }
            return .success(S3Credentials(accessKeyID: id, secret: secret, token: token))
        } catch {
            return .failure(error)
        }
    }

    private static func trimmed(_ bytes: UnsafeRawBufferPointer.SubSequence) -> UnsafeRawBufferPointer.SubSequence {
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
        guard let start = bytes.firstIndex(where: { !blank($0) }), let end = bytes.lastIndex(where: { !blank($0) }) else { return bytes[bytes.startIndex..<bytes.startIndex] }
        return bytes[start...end]
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        return String(cString: value)
    }

    /// A variable's bytes, copied straight into wiped memory.
    private static func environmentSecret(_ name: String) -> SecretBytes? {
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        return SecretBytes(UnsafeRawBufferPointer(start: value, count: strlen(value)))
    }

    /// The access key ID only: the secret is never described.
    public var description: String { "S3Credentials(\(accessKeyID), secret <redacted>)" }
}

/// Why no S3 credentials could be read, with where to put them.
public enum S3CredentialsError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Neither the environment nor the shared credentials file holds any.
    case noneFound
    /// `source` gives one part of the credentials but not `missing`.
    case incomplete(source: String, missing: String)
    /// The credentials file cannot be read.
    case unreadable(path: String, reason: String)
    /// The credentials file (or key store item) has no section for the profile.
    case noProfile(path: String, profile: String)

    public var description: String {
        switch self {
        case .noneFound:
            "No S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or write them in ~/.aws/credentials."
        case let .incomplete(source, missing):
            "The S3 credentials in \(source) lack \(missing): give both the access key ID and its secret."
        case let .unreadable(path, reason):
            "The S3 credentials file \(path) cannot be read: \(reason)."
        case let .noProfile(path, profile):
            "The S3 credentials in \(path) have no profile [\(profile)]: add it, or set AWS_PROFILE to one they have."
        }
    }
}

extension S3CredentialsError: DBCryptError {
    /// ``DBCryptErrorCategory/notFound`` when there are none or a profile is
    /// missing, ``DBCryptErrorCategory/storage`` for an unreadable file,
    /// ``DBCryptErrorCategory/misuse`` for half of them.
    public var category: DBCryptErrorCategory {
        switch self {
        case .noneFound, .noProfile: .notFound
        case .unreadable: .storage
        case .incomplete: .misuse
        }
    }
}
