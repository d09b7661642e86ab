import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// The suite's one HTTP client for servers on a loopback port (a `gateway
/// serve` process, a ``LiveServer``): AsyncHTTPClient, a client nobody here
/// wrote, non-blocking on the event loops it owns, so a request never holds
/// one of the few threads Swift concurrency runs every test on.
///
/// Every deadline is a backstop scaled by `GATEWAY_TEST_TIME_SCALE`, never a
/// timing: URLSession's default 60 s (and HummingbirdTesting's fixed 15 s
/// and 20 s) ran out on a busy machine for requests that were only waiting
/// for a core, and failed tests that were right.
public enum Loopback {
    /// How long a request may take at most before the client gives up (scaled).
    public static let requestBackstop: Duration = .seconds(120)

    /// A whole answer.
    public struct Answer: Sendable {
        public var status: Int
        public var body: Data
        /// Header names in lower case.
        public var headers: [String: String]
        /// The body as a JSON object (empty when it is not one).
        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        /// The body as text, for a failure's message.
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// `method path` on `127.0.0.1:port`, with `Authorization: Bearer <key>`
    /// unless `key` is nil and a JSON `body` when given; the whole answer.
    public static func request(port: Int, _ method: String, _ path: String, body: String? = nil, key: String? = nil,
                               headers: [String: String] = [:]) async throws -> Answer {
        let request = make(port: port, method, path, body: body, key: key, headers: headers)
        let response = try await HTTPClient.shared.execute(request, timeout: .nanoseconds(Int64(requestBackstop.scaled.nanoseconds)))
        var bytes = try await response.body.collect(upTo: 64 << 20)
        var fields: [String: String] = [:]
        for field in response.headers { fields[field.name.lowercased()] = field.value }
        return Answer(status: Int(response.status.code), body: bytes.readData(length: bytes.readableBytes) ?? Data(), headers: fields)
    }

    static func make(port: Int, _ method: String, _ path: String, body: String?, key: String?, headers: [String: String]) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = HTTPMethod(rawValue: method)
        if let key, !headers.keys.contains(where: { $0.lowercased() == "authorization" }) { request.headers.add(name: "Authorization", value: "Bearer \(key)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        return request
    }
}

extension Duration {
    /// The whole duration in nanoseconds (saturating).
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole &+ attoseconds / 1_000_000_000
    }
}

/// A server-sent-events stream read as a client reads it, frame by frame as
/// they come, until a marker appears, the server ends the stream, or a
/// backstop passes (scaled; it decides nothing on a run that is right, since
/// reading stops as soon as the marker is seen).
///
/// ``start(port:path:headers:until:within:key:)`` returns once the answer's
/// head has come: the server subscribes a stream to the session's live events
/// before it answers, so an event committed after that is on the stream. A
/// test waits for what the stream shows (``wait(for:)``, ``finish()``), never
/// for a time.
public final class EventStreamReader: Sendable {
    public static let backstop: Duration = .seconds(120)

    /// The answer's status and headers (names in lower case).
    public let status: Int
    public let headers: [String: String]

    private struct State {
        var text = ""
        var done = false
        /// Tests waiting for a marker (nil: for the reader to stop).
        var waiting: [(marker: String?, resume: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())
    private let reading = Mutex<Task<Void, Never>?>(nil)

    private init(status: Int, headers: [String: String]) {
        self.status = status
        self.headers = headers
    }

    public static func start(port: Int, path: String, headers: [String: String] = [:], until marker: String,
                             within limit: Duration = backstop, key: String? = nil) async throws -> EventStreamReader {
        var headers = headers
        headers["Accept"] = "text/event-stream"
        let request = Loopback.make(port: port, "GET", path, body: nil, key: key, headers: headers)
        let limit = limit.scaled
        let response = try await HTTPClient.shared.execute(request, timeout: .nanoseconds(limit.nanoseconds))
        var fields: [String: String] = [:]
        for field in response.headers { fields[field.name.lowercased()] = field.value }
        let reader = EventStreamReader(status: Int(response.status.code), headers: fields)
        let body = response.body
        let task = Task {
            do {
                for try await chunk in body {
                    if reader.append(String(buffer: chunk), marker: marker) { break }
                }
            } catch {
                // Cancelled by the backstop, or the connection ended: the stream is over either way.
            }
            reader.stopped()
        }
        reader.reading.withLock { $0 = task }
        // The backstop: stops the reading (which closes the connection) unless it ended first.
        Task {
            guard (try? await Task.sleep(for: limit)) != nil else { return }
            task.cancel()
        }
        return reader
    }

    /// Adds `chunk`; wakes the tests whose marker is now there; returns whether `marker` is.
    private func append(_ chunk: String, marker: String) -> Bool {
        let (seen, ready) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
            state.text += chunk
            let text = state.text
            var ready: [CheckedContinuation<Void, Never>] = []
            state.waiting.removeAll { waiter in
                guard let awaited = waiter.marker, text.contains(awaited) else { return false }
                ready.append(waiter.resume)
                return true
            }
            return (text.contains(marker), ready)
        }
        for continuation in ready { continuation.resume() }
        return seen
    }

    private func stopped() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.done = true
            defer { state.waiting = [] }
            return state.waiting.map { $0.resume }
        }
        for continuation in ready { continuation.resume() }
    }

    /// What the stream carried so far (its body).
    public var received: String { state.withLock { $0.text } }

    /// Waits until the stream shows `marker` (true), or the reader stopped
    /// without it (false).
    @discardableResult
    public func wait(for marker: String) async -> Bool {
        await awaitMarker(marker)
        return received.contains(marker)
    }

    /// Waits for the reader to stop (marker seen, stream closed or backstop passed).
    public func finish() async {
        await awaitMarker(nil)
    }

    /// Stops reading now (closing the connection) and waits for it.
    public func close() async {
        let task = reading.withLock { $0 }
        task?.cancel()
        await task?.value
    }

    private func awaitMarker(_ marker: String?) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.done { return true }
                if let marker, state.text.contains(marker) { return true }
                state.waiting.append((marker: marker, resume: continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }
}
