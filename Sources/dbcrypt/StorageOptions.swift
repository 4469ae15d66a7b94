import ArgumentParser
import DBCrypt
import DBCryptKeyStore
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

    @Option(name: .customLong("s3-keyring"),
            help: ArgumentHelp("Read them, written as that file, from the Secret Service item SERVICE/ACCOUNT.", valueName: "SERVICE/ACCOUNT"))
    var keyring: String?

    @Option(name: .customLong("s3-credential"),
            help: ArgumentHelp("Read them, written as that file, from the service credential NAME (systemd's LoadCredential=).", valueName: "NAME"))
    var credential: String?

    /// Whether any S3 setting was given.
    var isGiven: Bool { endpoint != nil || region != nil || credentialsSources.count > 0 }

    private var credentialsSources: [String] { [credentialsFile, keyring, credential].compactMap { $0 } }

    func validate() throws {
        if let endpoint, let url = URL(string: endpoint), url.user != nil || url.password != nil {
            throw ValidationError("--endpoint takes a URL without credentials (https://HOST); give the access key as AWS's tools read it.")
        }
        if let endpoint, URL(string: endpoint)?.host == nil { throw ValidationError("--endpoint takes a URL such as http://127.0.0.1:7480, not \(displayed(endpoint, limit: 64)).") }
        if credentialsSources.count > 1 { throw ValidationError("Give one of --s3-credentials-file, --s3-keyring and --s3-credential.") }
        _ = try storeItem
    }

    /// The key store item that holds the credentials, if one was named.
    private var storeItem: KeyStoreItem? {
        get throws { try KeyStoreItem(keyring: keyring, kernelKeyring: nil, credential: credential, prefix: "s3-") }
    }

    /// The credentials named by an option, or nil for AWS's usual variables and file.
    private func credentials() throws -> S3Credentials? {
        let profile = S3Credentials.profile
        if let credentialsFile { return try S3Credentials.fromFile(credentialsFile, profile: profile) }
        guard let item = try storeItem else { return nil }
        return try item.load().withKeyText { try S3Credentials(credentialsText: $0, source: item.name, profile: profile) }
    }

    /// The storage `destination` names: an S3 location, or a directory.
    func storage(_ destination: String) throws -> any BackupStorage {
        guard destination.hasPrefix("s3://") else {
            if isGiven { throw ValidationError("--endpoint, --region, --s3-credentials-file, --s3-keyring and --s3-credential are for an s3:// location.") }
            return try DirectoryBackupStorage(path: destination)
        }
        return try S3BackupStorage.fromEnvironment(destination, endpoint: endpoint.flatMap(URL.init(string:)), region: region, credentials: credentials())
    }
}
