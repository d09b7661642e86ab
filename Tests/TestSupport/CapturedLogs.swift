import Logging
import Synchronization

/// Every log line of a fixture (trace level up), to check what reaches the logs:
/// a card number, a secret, a token must never be among them.
public final class CapturedLogs: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    public func logger(_ label: String) -> Logger {
        var logger = Logger(label: label) { _ in Handler(sink: self) }
        logger.logLevel = .trace
        return logger
    }

    public func append(_ line: String) { lines.withLock { $0.append(line) } }
    public var all: [String] { lines.withLock { $0 } }

    struct Handler: LogHandler {
        let sink: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(level: Logger.Level, message: Logger.Message, metadata extra: Logger.Metadata?, source: String, file: String, function: String, line: UInt) {
            let all = metadata.merging(extra ?? [:]) { $1 }
            sink.append("\(level) \(all.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")) \(message)")
        }
    }
}

