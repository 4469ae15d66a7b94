import ArgumentParser
import DBCryptSeal
import Foundation

/// `dbcrypt envelope`: the server envelope, Base64(IV ‖ tag ‖ ciphertext).
struct Envelope: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Seal or open a server envelope: Base64 of IV, tag and ciphertext (AES-256-GCM).",
        discussion: """
            seal reads the plaintext from standard input and prints the envelope; open reads \
            the envelope and writes the plaintext. The key comes from --key-env (a server's \
            ENCRYPTION_KEY) or --key-file: 64 hex digits, Base64 of 32 bytes, or 32 bytes of \
            text; --padded-text-key takes the first 32 characters of a text key padded with \
            "0", as some clients do. The additional data is "additional-data" unless given.

            Example:
              echo -n 'hello' | dbcrypt envelope seal --key-env ENCRYPTION_KEY
              dbcrypt envelope open --key-env ENCRYPTION_KEY < reply.txt
            """,
        subcommands: [Seal.self, Open.self])

    /// `envelope seal`: standard input to an envelope.
    struct Seal: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Seal standard input and print the envelope.")
        @OptionGroup var options: EnvelopeOptions

        func run() throws {
            let envelope = try options.envelope()
            try StandardStreams.print(try envelope.seal(StandardStreams.readInput()))
        }
    }

    /// `envelope open`: an envelope on standard input to its plaintext.
    struct Open: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Open the envelope on standard input and write its plaintext.")
        @OptionGroup var options: EnvelopeOptions

        func run() throws {
            let envelope = try options.envelope()
            guard let text = String(data: try StandardStreams.readInput(), encoding: .utf8) else { throw SealError.notBase64 }
            do {
                try StandardStreams.write(try envelope.open(text))
            } catch SealError.authenticationFailed {
                // AES-GCM cannot tell a wrong key from an altered envelope.
                throw CLIError("The envelope does not open: its key or additional data is not this one, or it was altered.", category: .wrongKey)
            }
        }
    }
}

/// What both `envelope` commands take: the key and the additional data.
struct EnvelopeOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The additional data to authenticate (not secret).", valueName: "TEXT"))
    var additionalData = "additional-data"

    @OptionGroup var key: KeyOptions

    @Flag(help: "The key is text whose first 32 characters, padded with \"0\", are the key (the compatibility form of some clients).")
    var paddedTextKey = false

    func validate() throws {
        if !key.isGiven { throw ValidationError("Give the key with --key-env NAME, --key-file PATH or a key store (--key-keyring SERVICE/ACCOUNT, ...).") }
    }

    /// The envelope under the key given.
    func envelope() throws -> ServerEnvelope {
        ServerEnvelope(key: try key.sealingKey(paddedText: paddedTextKey), additionalData: additionalData)
    }
}
