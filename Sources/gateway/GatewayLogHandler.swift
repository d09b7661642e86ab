import Foundation
import Logging
import Synchronization

/// The host's log handler: lines to standard error in swift-log's
/// `StreamLogHandler` format (`2026-11-29T01:50:07+0000 info gateway: k=v
/// [Module] message`), with metadata turned into text only when a line is
/// written.
///
/// `StreamLogHandler` renders its metadata to a string each time the
/// metadata changes. The HTTP server sets a request id on a copy of the
/// logger for every request, so every request paid for sorting and
/// formatting metadata that, at the levels a loaded server runs at, no line
/// ever showed. Here setting metadata is a dictionary write.
///
/// Hummingbird names its request id `hb.request.id`; the host's lines have
/// always called it `request_id` (the id also sent back in `X-Request-Id`),
/// so it is written under that name.
struct GatewayLogHandler: LogHandler {
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    private let label: String

    init(label: String, level: Logger.Level, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.logLevel = level
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty {
            all.merge(provided) { _, provided in provided }
        }
        if let explicit = event.metadata, !explicit.isEmpty {
            all.merge(explicit) { _, explicit in explicit }
        }
        if let error = event.error {
            all["error.message"] = "\(error)"
            all["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        var line = Self.timestamp() + " \(event.level)" + (label.isEmpty ? "" : " ") + label + ":"
        if !all.isEmpty {
            let named = all.map { (key: $0.key == "hb.request.id" ? "request_id" : $0.key, value: $0.value) }
            for (key, value) in named.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        }
        line += " [\(event.source)] \(event.message)\n"
        Self.write(line)
    }

    /// One line at a time: lines from many threads never interleave.
    private static let output = Mutex(())

    private static func write(_ line: String) {
        var line = line
        output.withLock { _ in
            line.withUTF8 { bytes in
                var written = 0
                while written < bytes.count {
                    let count = Foundation.write(STDERR_FILENO, bytes.baseAddress! + written, bytes.count - written)
                    if count > 0 { written += count } else if count < 0, errno == EINTR { continue } else { return }
                }
            }
        }
    }

    /// Local time to the second, as `StreamLogHandler` writes it.
    private static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        guard localtime_r(&now, &parts) != nil else { return "<unknown>" }
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
