import CheckoutHTTP
import Foundation
import ServiceLifecycle
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

    /// A request over the network (to `port`, the main listener's by
    /// default), with `Authorization: Bearer <key>` unless `key` is nil;
    /// returns status and the body as JSON. Through ``Loopback``: a
    /// backstop (scaled) never decides the result.
    func request(_ method: String, _ path: String, _ body: String? = nil, key: String? = APIFixture.testKey,
                 port: Int? = nil, headers: [String: String] = [:]) async throws -> (status: Int, json: [String: Any]) {
        let answer = try await Loopback.request(port: port ?? self.port, method, path, body: body, key: key, headers: headers)
        return (answer.status, answer.json)
    }

    /// What the server writes first on an event stream, right after its
    /// headers (`EventStream.response` in CheckoutHTTP). The stream's
    /// subscription to the session's live events is made before it, so an
    /// event committed once this is seen is on the stream.
    static let streamOpening = ": stream of session events"

    /// A session's event stream read as it comes, until `marker` (see
    /// ``EventStreamReader``), with the fixture's test key.
    func events(_ path: String, headers: [String: String] = [:], until marker: String) async throws -> EventStreamReader {
        try await EventStreamReader.start(port: port, path: path, headers: headers, until: marker, key: APIFixture.testKey)
    }
}
