import CheckoutHTTP
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ServiceLifecycle
import Synchronization

/// A fixture's server running on a loopback port, as `gateway serve` runs it
/// (gateway, manifests watcher, HTTP), without signal handlers.
struct LiveServer {
    let port: Int
    /// The webhook-only listener's port, when started `withWebhookListener`.
    let webhookPort: Int?
    let group: ServiceGroup
    let task: Task<Void, Error>

    static func start(_ fixture: APIFixture, poll: Duration = .milliseconds(100), withWebhookListener: Bool = false) async throws -> LiveServer {
        let (ports, sink) = AsyncStream.makeStream(of: Int.self)
        let (webhookPorts, webhookSink) = AsyncStream.makeStream(of: Int.self)
        let group = fixture.server(poll: poll, webhookPort: withWebhookListener ? 0 : nil)
            .serviceGroup(signals: [], onRunning: { port in sink.yield(port) }, onWebhooksRunning: { port in webhookSink.yield(port) })
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw URLError(.cannotConnectToHost) }
        var webhookPort: Int?
        if withWebhookListener {
            var webhooks = webhookPorts.makeAsyncIterator()
            guard let bound = await webhooks.next() else { throw URLError(.cannotConnectToHost) }
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
    /// returns status and the body as JSON.
    func request(_ method: String, _ path: String, _ body: String? = nil, key: String? = APIFixture.testKey,
                 port: Int? = nil, headers: [String: String] = [:]) async throws -> (status: Int, json: [String: Any]) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port ?? self.port)\(path)")!)
        request.httpMethod = method
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
/// client does, until a marker appears or a deadline passes.
final class StreamReader: Sendable {
    private let text = Mutex("")
    private let done = Mutex(false)

    /// Connects and sends `GET path` (with `headers`, and `Authorization:
    /// Bearer <key>` unless they have one or `key` is nil); reading goes on in a thread of its own.
    init(port: Int, path: String, headers: [String: String] = [:], until marker: String, seconds: Int = 10,
         key: String? = APIFixture.testKey) throws {
        var headers = headers
        if let key, !headers.keys.contains(where: { $0.lowercased() == "authorization" }) { headers["Authorization"] = "Bearer \(key)" }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(fd); throw POSIXError(.ECONNREFUSED) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let fields = headers.map { "\($0.key): \($0.value)\r\n" }.joined()
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\(fields)\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        let deadline = Date().addingTimeInterval(TimeInterval(seconds))
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while Date() < deadline {
                let count = recv(fd, &buffer, buffer.count, 0)
                if count == 0 { break }
                if count > 0 {
                    let chunk = String(decoding: buffer[0..<count], as: UTF8.self)
                    let seen = text.withLock { $0 += chunk; return $0.contains(marker) }
                    if seen { break }
                }
            }
            close(fd)
            done.withLock { $0 = true }
        }
        thread.start()
    }

    var received: String { text.withLock { $0 } }

    /// Waits for the reader to stop (marker seen, stream closed or deadline).
    func finish() async {
        while !done.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(20)) }
    }
}
