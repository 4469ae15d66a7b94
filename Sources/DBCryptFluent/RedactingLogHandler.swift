#if Fluent
import Logging

/// The logger Fluent's query builder is given: FluentKit logs "Running
/// query" at debug level with the query's input and filters, the very
/// values the file encrypts. This handler passes every message on to the
/// app's own handler, with only the query's action, table and fields left
/// in that one's metadata.
struct RedactingLogHandler: LogHandler {
    /// The app's handler.
    var upstream: any LogHandler

    /// The metadata of FluentKit's "Running query" that holds no value.
    private static let keptQueryMetadata: Set<String> = ["action", "schema", "unique", "fields"]

    func log(event: LogEvent) {
        var event = event
        if event.message.description == "Running query" {
            event.metadata = event.metadata?.filter { Self.keptQueryMetadata.contains($0.key) }
        }
        upstream.log(event: event)
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { upstream.metadataProvider }
        set { upstream.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { upstream[metadataKey: key] }
        set { upstream[metadataKey: key] = newValue }
    }

    var metadata: Logger.Metadata {
        get { upstream.metadata }
        set { upstream.metadata = newValue }
    }

    var logLevel: Logger.Level {
        get { upstream.logLevel }
        set { upstream.logLevel = newValue }
    }
}

extension Logger {
    /// This logger, with FluentKit's query logs stripped of bound values.
    var redactingQueryValues: Logger {
        var logger = self
        logger.handler = RedactingLogHandler(upstream: handler)
        return logger
    }
}
#endif
