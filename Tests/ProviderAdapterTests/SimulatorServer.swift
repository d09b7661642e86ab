import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore
import ProviderSandbox
import TestSupport

/// A ``ProviderSandbox`` serving on a loopback port chosen by the system,
/// with an HTTP client; ``stop()`` ends both.
final class SimulatorServer: Sendable {
    let sandbox: ProviderSandbox
    /// `http://127.0.0.1:PORT`.
    let root: String
    let client: HTTPClient
    private let server: Task<Void, any Error>

    /// What a simulator answered: status, `Location` and body text.
    struct Reply {
        var status: Int
        var location: String?
        var text: String
    }

    private init(sandbox: ProviderSandbox, root: String, server: Task<Void, any Error>, client: HTTPClient.Configuration) {
        self.sandbox = sandbox
        self.root = root
        self.server = server
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: client)
    }

    /// Starts `simulators` alone, logging only critical messages under `label`;
    /// by default the client follows no redirect.
    static func start(_ simulators: [any ProviderSimulator], label: String,
                      client: HTTPClient.Configuration = .init(redirectConfiguration: .disallow)) async throws -> SimulatorServer {
        var logger = Logger(label: label)
        logger.logLevel = .critical
        return try await start(ProviderSandbox(simulators: simulators, logger: logger), client: client)
    }

    /// Starts `sandbox` on port 0 and waits until it listens.
    static func start(_ sandbox: ProviderSandbox, client: HTTPClient.Configuration) async throws -> SimulatorServer {
        let (port, server) = try await runUntilListening("the simulators") { onRunning in sandbox.application(port: 0, onRunning: onRunning) }
        return SimulatorServer(sandbox: sandbox, root: "http://127.0.0.1:\(port)", server: server, client: client)
    }

    /// Runs the application `make` builds (handing it the callback that
    /// reports its port) and waits until it listens: its port and its task.
    /// A server that ends before it listens (a bind that failed) ends the
    /// wait too, so this never waits for a port that will not come.
    static func runUntilListening<App: ApplicationProtocol>(
        _ what: String, _ make: (@escaping @Sendable (Int) async -> Void) -> App
    ) async throws -> (port: Int, server: Task<Void, any Error>) {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = make { continuation.yield($0) }
        let server = Task {
            defer { continuation.finish() }
            try await application.runService()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            server.cancel()
            let why = await server.result
            throw SandboxGatewayError(message: "\(what) did not start: \(why)")
        }
        return (port, server)
    }

    /// Sends `request` and reads the answer (at most 1 MiB).
    func send(_ request: HTTPClientRequest, timeout: TimeAmount = .seconds(60)) async throws -> Reply {
        let response = try await client.execute(request, timeout: .nanoseconds(Int64(Double(timeout.nanoseconds) * TestTime.scale)))
        let body = try await response.body.collect(upTo: 1 << 20)
        return Reply(status: Int(response.status.code), location: response.headers.first(name: "location"), text: String(buffer: body))
    }

    /// `method url` with `headers` and, when given, `body` of its content type.
    func send(_ method: String, _ url: String, headers: [(name: String, value: String)] = [],
              body: (contentType: String, text: String)? = nil) async throws -> Reply {
        var request = HTTPClientRequest(url: url)
        request.method = .init(rawValue: method)
        for header in headers { request.headers.add(name: header.name, value: header.value) }
        if let body {
            request.headers.add(name: "Content-Type", value: body.contentType)
            request.body = .bytes(ByteBuffer(string: body.text))
        }
        return try await send(request)
    }

    /// An `Authorization: Bearer <token>` header, none without a token.
    static func bearer(_ token: String?) -> [(name: String, value: String)] {
        token.map { [("Authorization", "Bearer " + $0)] } ?? []
    }

    /// Stops the server, then the client.
    func stop() async {
        server.cancel()
        _ = try? await server.value
        try? await client.shutdown()
    }
}
