import Foundation
import Logging
@testable import PluginHost

/// Log lines captured from a logger handed to the code under test.
final class EgressLogRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var captured: [(level: Logger.Level, text: String)] = []

    func logger(level: Logger.Level = .debug) -> Logger {
        var logger = Logger(label: "egress-test") { _ in Handler(recorder: self) }
        logger.logLevel = level
        return logger
    }

    var lines: [(level: Logger.Level, text: String)] { lock.withLock { captured } }
    var text: String { lines.map { "[\($0.level)] \($0.text)" }.joined(separator: "\n") }

    fileprivate func append(_ level: Logger.Level, _ text: String) { lock.withLock { captured.append((level, text)) } }

    private struct Handler: LogHandler {
        let recorder: EgressLogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let fields = metadata.merging(event.metadata ?? [:]) { $1 }.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
            recorder.append(event.level, "\(event.message) \(fields)")
        }
    }
}

/// Builds a manifest and a host context for one adapter's egress, with secrets
/// written to files in a scratch folder.
final class EgressFixture {
    let folder: URL
    let logs = EgressLogRecorder()

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("egress-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    /// A valid manifest with `egress`, `secrets` (name -> value, stored in files) and an optional `tls` block.
    func manifest(egress: [String], secrets: [String: String] = [:], tls: [String: Any]? = nil) throws -> Manifest {
        var references: [String: String] = [:]
        for (name, value) in secrets {
            try Data(value.utf8).write(to: folder.appendingPathComponent("\(name).secret"))
            references[name] = "file:\(name).secret"
        }
        var object: [String: Any] = [
            "file_format_version": "1.0.0", "id": "egress-test", "version": "1.0.0", "enabled": true,
            "library": "libNone.so", "abi": ["major": 1, "minor": 0], "methods": ["visa"], "currencies": ["SAR"],
            "countries": ["SA"], "operations": ["authorize"], "egress": egress, "secrets": references,
        ]
        if let tls { object["tls"] = tls }
        let data = try JSONSerialization.data(withJSONObject: object)
        guard case .valid(let manifest) = ManifestValidator.validate(data) else {
            throw EgressFixtureError(message: "the fixture manifest is invalid: \(ManifestValidator.validate(data))")
        }
        return manifest
    }

    func context(_ manifest: Manifest, client: any HTTPEgressClient, level: Logger.Level = .debug) -> HostContext {
        HostContext(manifest: manifest, manifestDirectory: folder, egressClient: client, logger: logs.logger(level: level))
    }

    /// An `http_send` request document.
    static func request(_ method: String = "GET", _ url: String, headers: [String: String] = [:], body: String? = nil,
                        timeoutMilliseconds: Int? = nil) -> Data {
        var object: [String: Any] = ["method": method, "url": url, "headers": headers]
        if let body { object["body"] = Data(body.utf8).base64EncodedString() }
        if let timeoutMilliseconds { object["timeout_ms"] = timeoutMilliseconds }
        return try! JSONSerialization.data(withJSONObject: object)
    }
}

struct EgressFixtureError: Error { var message: String }

/// The callback document of `http_send`: a response on `GW_OK`, a message otherwise.
struct EgressOutcome {
    var status: ABIStatus
    var httpStatus: Int?
    var headers: [String: String] = [:]
    var body: String = ""
    var message: String = ""

    init(_ result: (Int32, Data)) throws {
        status = ABIStatus(rawValue: result.0)
        let object = try JSONSerialization.jsonObject(with: result.1) as? [String: Any] ?? [:]
        if status == .ok {
            httpStatus = object["status"] as? Int
            headers = object["headers"] as? [String: String] ?? [:]
            body = (object["body"] as? String).flatMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) } ?? ""
        } else {
            message = object["message"] as? String ?? ""
        }
    }
}
