import Synchronization

/// The requests a server is answering now (method, path, since when):
/// what a graceful shutdown that is taking long is waiting for, logged by
/// ``ShutdownStep``.
public final class RequestsInFlight: Sendable {
    private struct Entry: Sendable {
        var method: String
        /// As the caller sent it: masked only when it is shown.
        var path: String
        var requestID: String
        var started: ContinuousClock.Instant
        /// Put together only when someone reads it (at a slow shutdown), not
        /// for every request; card numbers and API keys in the path masked.
        var line: String { "\(method) \(RequestLogMiddleware.masked(path)) [\(requestID)]" }
    }

    private let entries = Mutex<(next: UInt64, all: [UInt64: Entry])>((0, [:]))

    public init() {}

    /// Records a request; the token ends it (``end(_:)``).
    func begin(method: String, path: String, requestID: String) -> UInt64 {
        let now = ContinuousClock.now
        return entries.withLock { entries in
            entries.next += 1
            entries.all[entries.next] = Entry(method: method, path: path, requestID: requestID, started: now)
            return entries.next
        }
    }

    func end(_ token: UInt64) {
        _ = entries.withLock { $0.all.removeValue(forKey: token) }
    }

    public var count: Int { entries.withLock { $0.all.count } }

    /// The oldest requests first, each with how long it has run (at most `limit`).
    public func describe(limit: Int = 10) -> String {
        let now = ContinuousClock.now
        let all = entries.withLock { Array($0.all.values) }.sorted { $0.started < $1.started }
        guard !all.isEmpty else { return "no request in flight" }
        let shown = all.prefix(limit).map { "\($0.line) (running \(now - $0.started))" }
        return "\(all.count) requests in flight: " + shown.joined(separator: ", ") + (all.count > limit ? ", …" : "")
    }
}
