import Logging
import Synchronization

/// What the adapter (and the host about it) logged at warning level or above
/// while the check ran, kept so that a failed step can say it: an adapter's
/// own reason for a refusal is the first thing its author needs. Every line
/// still goes to the check's log as before.
final class AdapterLogTap: Sendable {
    private let lines = Mutex<[String]>([])
    /// At most this many lines are kept between two steps (the oldest dropped).
    static let kept = 20

    /// `logger`, with every line at warning or above also kept here.
    func tapping(_ logger: Logger) -> Logger {
        var tapped = Logger(label: logger.label) { _ in Handler(forward: logger, tap: self) }
        tapped.logLevel = Swift.min(logger.logLevel, .warning)
        return tapped
    }

    /// The lines kept since the last call.
    func take() -> [String] {
        lines.withLock { kept in defer { kept.removeAll() }; return kept }
    }

    fileprivate func keep(_ line: String) {
        lines.withLock { kept in
            kept.append(line)
            if kept.count > Self.kept { kept.removeFirst(kept.count - Self.kept) }
        }
    }

    private struct Handler: LogHandler {
        let forward: Logger
        let tap: AdapterLogTap
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
                 file: String, function: String, line: UInt) {
            if level >= .warning { tap.keep("\(level): \(message)") }
            var merged = self.metadata
            if let metadata { merged.merge(metadata) { $1 } }
            forward.log(level: level, message, metadata: merged, source: source, file: file, function: function, line: line)
        }
    }
}
