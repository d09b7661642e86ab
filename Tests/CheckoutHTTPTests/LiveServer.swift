import CheckoutHTTP
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ServiceLifecycle
import Synchronization
import TestSupport

/// A fixture's server running on a loopback port, as `gateway serve` runs it
/// (gateway, manifests watcher, HTTP), without signal handlers.
///
/// A test runs one with ``with(_:poll:withWebhookListener:_:)``, which stops
/// it whether the test returns or throws: a server left running by a failed
/// test would keep its gateway, its watcher and its listeners on the two
/// cores every other test shares.
struct LiveServer {
    let port: Int
    /// The webhook-only listener's port, when started `withWebhookListener`.
    let webhookPort: Int?
    let group: ServiceGroup
    let task: Task<Void, Error>

    /// How long a server may take to bind its listeners (scaled by
    /// `GATEWAY_TEST_TIME_SCALE`): a backstop against a bind that never
    /// comes, never a timing.
    static let bindBackstop: Duration = .seconds(120)

    /// A server that did not come up, and why.
    struct NotServing: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `body` with a server started for `fixture`, then stops the
    /// server gracefully, whether `body` returns or throws (a failed
    /// `#require` included). A failure to stop is thrown when `body`
    /// returned; when it threw, its own error is the one thrown.
    @discardableResult
    static func with<T>(_ fixture: APIFixture, poll: Duration = .milliseconds(100), withWebhookListener: Bool = false,
                        _ body: (LiveServer) async throws -> T) async throws -> T {
        let server = try await start(fixture, poll: poll, withWebhookListener: withWebhookListener)
        let result: T
        do {
            result = try await body(server)
        } catch {
            try? await server.stop()
            throw error
        }
        try await server.stop()
        return result
    }

    /// Starts the server; returns once every listener is bound.
    ///
    /// Never waits for a port that cannot come: the group's end (a listener
    /// that cannot bind, a service that throws) ends the wait with the
    /// group's error, and so does ``bindBackstop``. On any throw the group is
    /// cancelled and waited for, so nothing of it is left running.
    static func start(_ fixture: APIFixture, poll: Duration = .milliseconds(100), withWebhookListener: Bool = false) async throws -> LiveServer {
        let (ports, sink) = AsyncStream.makeStream(of: Int.self)
        let (webhookPorts, webhookSink) = AsyncStream.makeStream(of: Int.self)
        let group = fixture.server(poll: poll, webhookPort: withWebhookListener ? 0 : nil)
            .serviceGroup(signals: [], onRunning: { port in sink.yield(port) }, onWebhooksRunning: { port in webhookSink.yield(port) })
        let task = Task {
            // A group that ends, bound or not, ends the waits for its ports.
            defer {
                sink.finish()
                webhookSink.finish()
            }
            try await group.run()
        }
        let limit = bindBackstop.scaled
        let backstop = Task {
            guard (try? await Task.sleep(for: limit)) != nil else { return }
            sink.finish()
            webhookSink.finish()
        }
        defer { backstop.cancel() }
        /// Why no port came: the group's error when it ended with one.
        func notServing(_ listener: String) async -> any Error {
            task.cancel()
            if case .failure(let error) = await task.result, !(error is CancellationError) { return error }
            return NotServing(description: "the server did not bind its \(listener) within \(limit), nor end with an error")
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw await notServing("listener") }
        var webhookPort: Int?
        if withWebhookListener {
            var webhooks = webhookPorts.makeAsyncIterator()
            guard let bound = await webhooks.next() else { throw await notServing("webhook listener") }
            webhookPort = bound
        }
        return LiveServer(port: port, webhookPort: webhookPort, group: group, task: task)
    }

    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }

    /// How long a request may take before URLSession gives up on it (scaled):
    /// a backstop against a server that never answers. URLSession's own
    /// default (60 s) ran out on a busy machine for requests that were only
    /// waiting for a core, and failed tests that were right.
    static let requestBackstop = TestTime.seconds(120)

    /// A request over the network (to `port`, the main listener's by
    /// default), with `Authorization: Bearer <key>` unless `key` is nil;
    /// returns status and the body as JSON.
    func request(_ method: String, _ path: String, _ body: String? = nil, key: String? = APIFixture.testKey,
                 port: Int? = nil, headers: [String: String] = [:]) async throws -> (status: Int, json: [String: Any]) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port ?? self.port)\(path)")!)
        request.httpMethod = method
        request.timeoutInterval = Self.requestBackstop
        if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return (status, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }
}

/// Reads a response stream from a plain socket, as a server-sent-events
/// client does, until a marker appears, the server ends the stream, or a
/// backstop passes.
///
/// Everything that blocks (connecting, sending, each read) runs on a thread
/// of the reader's own, never on one of the few Swift concurrency runs every
/// test on; a test waits for what the stream shows (``wait(for:)``,
/// ``finish()``) without holding a thread.
final class StreamReader: Sendable {
    /// What the server writes first on an event stream, right after its
    /// headers (`EventStream.response` in CheckoutHTTP). The stream's
    /// subscription to the session's live events is made before it, so an
    /// event committed once this is seen is on the stream.
    static let opening = ": stream of session events"

    /// How long a reader reads at most (scaled by `GATEWAY_TEST_TIME_SCALE`):
    /// a backstop for a stream that never shows its marker. A reader stops
    /// as soon as the marker is seen, so the backstop decides nothing on a
    /// run that is right, however slow.
    static let backstop: Duration = .seconds(120)

    private struct State {
        var text = ""
        var done = false
        /// Tests waiting for a marker (nil: for the reader to stop).
        var waiting: [(marker: String?, resume: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    private init() {}

    /// Connects and sends `GET path` (with `headers`, and `Authorization:
    /// Bearer <key>` unless they have one or `key` is nil), on the reader's
    /// thread; returns once the request is sent. Reading goes on there until
    /// `marker` is seen, the stream ends, or `limit` (scaled) passes.
    static func start(port: Int, path: String, headers: [String: String] = [:], until marker: String,
                      within limit: Duration = StreamReader.backstop, key: String? = APIFixture.testKey) async throws -> StreamReader {
        var headers = headers
        if let key, !headers.keys.contains(where: { $0.lowercased() == "authorization" }) { headers["Authorization"] = "Bearer \(key)" }
        let fields = headers.map { "\($0.key): \($0.value)\r\n" }.joined()
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\(fields)\r\n"
        let reader = StreamReader()
        let limit = limit.scaled
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread {
                let fd: Int32
                do {
                    fd = try StreamReader.connected(to: port)
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                let sent = request.withCString { send(fd, $0, strlen($0), 0) }
                guard sent >= 0 else {
                    let code = POSIXErrorCode(rawValue: errno) ?? .EIO
                    close(fd)
                    continuation.resume(throwing: POSIXError(code))
                    return
                }
                continuation.resume()
                reader.read(fd, until: marker, end: ContinuousClock.now + limit)
            }.start()
        }
        return reader
    }

    /// A socket connected to `port` on 127.0.0.1 whose reads wait at most a
    /// second each (so the reader looks at its deadline).
    private static func connected(to port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    /// The reader's thread: reads until `marker`, the stream's end, an error or `end`.
    private func read(_ fd: Int32, until marker: String, end: ContinuousClock.Instant) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < end {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 { break }
            if count < 0 {
                // A second without data (SO_RCVTIMEO) or a signal: read on. Anything else ends the stream.
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                break
            }
            if append(String(decoding: buffer[0..<count], as: UTF8.self), marker: marker) { break }
        }
        close(fd)
        stopped()
    }

    /// Adds `chunk`; wakes the tests whose marker is now there; returns whether `marker` is.
    private func append(_ chunk: String, marker: String) -> Bool {
        let (seen, ready) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
            state.text += chunk
            let text = state.text
            var ready: [CheckedContinuation<Void, Never>] = []
            var still: [(marker: String?, resume: CheckedContinuation<Void, Never>)] = []
            for waiter in state.waiting {
                if let awaited = waiter.marker, text.contains(awaited) {
                    ready.append(waiter.resume)
                } else {
                    still.append(waiter)
                }
            }
            state.waiting = still
            return (text.contains(marker), ready)
        }
        for continuation in ready { continuation.resume() }
        return seen
    }

    private func stopped() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.done = true
            let ready = state.waiting.map { $0.resume }
            state.waiting = []
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    var received: String { state.withLock { $0.text } }

    /// Waits until the stream shows `marker` (true), or the reader stopped
    /// without it (false): the event that proves what a test waits for, in
    /// place of a sleep that guesses how long it takes.
    @discardableResult
    func wait(for marker: String) async -> Bool {
        await awaitMarker(marker)
        return received.contains(marker)
    }

    /// Waits for the reader to stop (marker seen, stream closed or backstop passed).
    func finish() async {
        await awaitMarker(nil)
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
