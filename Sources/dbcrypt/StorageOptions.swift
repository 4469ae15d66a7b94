import ArgumentParser
import DBCrypt
import DBCryptS3
import Foundation

/// Where a backup goes or comes from: a directory, or `s3://BUCKET/PREFIX`
/// with the S3 service's endpoint, region and credentials.
struct StorageOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The S3 service's endpoint, for s3:// storage other than AWS (default: $AWS_ENDPOINT_URL).", valueName: "URL"))
    var endpoint: String?

    @Option(help: ArgumentHelp("The S3 region requests are signed for (default: $AWS_REGION, else us-east-1).", valueName: "NAME"))
    var region: String?

    @Option(name: .customLong("s3-credentials-file"),
            help: ArgumentHelp("Read the S3 access key from this AWS credentials file, profile $AWS_PROFILE or default (default: $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY, else ~/.aws/credentials).",
                               valueName: "PATH"))
    var credentialsFile: String?

    /// Whether any S3 setting was given.
    var isGiven: Bool { endpoint != nil || region != nil || credentialsFile != nil }

    func validate() throws {
        if let endpoint, URL(string: endpoint)?.host == nil { throw ValidationError("--endpoint takes a URL such as http://127.0.0.1:7480, not \(endpoint).") }
    }

    /// The storage `destination` names: an S3 location, or a directory.
    func storage(_ destination: String) throws -> any BackupStorage {
        guard destination.hasPrefix("s3://") else {
            if isGiven { throw ValidationError("--endpoint, --region and --s3-credentials-file are for an s3:// location.") }
            return try DirectoryBackupStorage(path: destination)
        }
        let credentials = try credentialsFile.map { try S3Credentials.fromFile($0, profile: ProcessInfo.processInfo.environment["AWS_PROFILE"] ?? "default") }
        return try S3BackupStorage.fromEnvironment(destination, endpoint: endpoint.flatMap(URL.init(string:)), region: region, credentials: credentials)
    }
}
