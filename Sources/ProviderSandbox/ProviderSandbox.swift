import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// The provider simulators behind one loopback HTTP server: `gateway sandbox`
/// serves it alone, `gateway serve --sandbox` in-process beside the checkout API.
///
/// Layout of the server:
/// - `/<simulator id>/…`: each simulator's API and payer pages (``ProviderSimulator``).
/// - `/_sandbox/faults` (`POST` a rule, `DELETE` all): faults for the next requests,
///   `{"provider": "hyperpay", "path": "/v1/checkouts", "method": "POST",
///   "fault": "latency" | "status" | "drop", "milliseconds": 3000, "status": 503, "count": 1}`.
/// - `/_sandbox/stats` (`GET`): each simulator's charge count.
///
/// It listens on loopback only: the simulators accept fixed sandbox credentials.
public final class ProviderSandbox: Sendable {
    public let simulators: [any ProviderSimulator]
    public let faults: FaultPlan
    private let boundURL = Mutex<String?>(nil)
    let logger: Logger

    public init(simulators: [any ProviderSimulator], faults: FaultPlan = FaultPlan(), logger: Logger = Logger(label: "sandbox")) {
        self.simulators = simulators
        self.faults = faults
        self.logger = logger
    }

    /// The server's base URL (`http://127.0.0.1:PORT`) once it listens.
    public var baseURL: String? { boundURL.withLock { $0 } }

    /// The simulator with `id`.
    public func simulator(_ id: String) -> (any ProviderSimulator)? { simulators.first { $0.id == id } }

    /// The router: every simulator under its prefix, and the control routes.
    public func router() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        let context = SandboxContext(baseURL: { self.baseURL ?? "http://127.0.0.1" }, faults: faults)
        router.add(middleware: FaultMiddleware(faults: faults, simulators: simulators))
        for simulator in simulators {
            simulator.register(on: router.group(RouterPath(simulator.id)), sandbox: context)
        }
        SandboxControl(sandbox: self).register(on: router.group("_sandbox"))
        return router
    }

    /// The Hummingbird application on `host:port` (port 0: any free port);
    /// `onRunning` gets the bound port.
    public func application(host: String = "127.0.0.1", port: Int = 0,
                            onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        return Application(
            router: router(),
            configuration: .init(address: .hostname(host, port: port), serverName: "gateway-sandbox"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                let shown = host.contains(":") ? "[\(host)]" : host
                self.boundURL.withLock { $0 = "http://\(shown):\(port)" }
                await onRunning(port)
            },
            logger: logger)
    }
}

extension ProviderSandbox {
    /// Simulator `id` alone at the root of a server of its own: Worldline's
    /// `/v2/{merchantId}/…` rather than `/worldline/v2/…`, as a provider's
    /// official SDK expects of its host (an SDK takes a host, never a path
    /// prefix). The same simulator, with the same state, as the shared
    /// server's; faults apply on the shared server only. Nil for an unknown id.
    public func rootApplication(for id: String, host: String = "127.0.0.1", port: Int = 0,
                                onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> (some ApplicationProtocol)? {
        guard let simulator = simulator(id) else { return nil as Application<RouterResponder<BasicRequestContext>>? }
        let bound = Mutex<String?>(nil)
        let router = Router(context: BasicRequestContext.self)
        var context = SandboxContext(baseURL: { bound.withLock { $0 } ?? "http://127.0.0.1" }, faults: FaultPlan())
        context.prefixed = false
        simulator.register(on: router.group(), sandbox: context)
        return Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "gateway-sandbox-\(id)"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                bound.withLock { $0 = "http://\(host.contains(":") ? "[\(host)]" : host):\(port)" }
                await onRunning(port)
            },
            logger: logger)
    }
}

/// Applies the ``FaultPlan`` to requests for a simulator.
struct FaultMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let faults: FaultPlan
    let simulators: [any ProviderSimulator]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        let trimmed = path.drop { $0 == "/" }
        let id = String(trimmed.prefix { $0 != "/" })
        guard let simulator = simulators.first(where: { $0.id == id }) else { return try await next(request, context) }
        let relative = String(trimmed.dropFirst(id.count))
        let fault = faults.take(provider: id, path: relative.isEmpty ? "/" : relative, method: request.method.rawValue)
        var delay = faults.baseLatencyMilliseconds
        if case .latency(let milliseconds) = fault { delay += milliseconds }
        if case .status(let code) = fault {
            // A failing provider is no faster than a working one.
            if delay > 0 { try await Task.sleep(for: .milliseconds(delay)) }
            let (contentType, body) = simulator.errorBody(forStatus: code)
            return Response(status: HTTPResponse.Status(code: code), headers: [.contentType: contentType],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
        }
        let response = try await next(request, context)
        if delay > 0 { try await Task.sleep(for: .milliseconds(delay)) }
        guard fault == .drop else { return response }
        // Processed, then cut off: a promised length, a few bytes, and the
        // connection closes under the client.
        var cut = Response(status: response.status, headers: response.headers)
        cut.headers[.contentLength] = "4096"
        cut.body = ResponseBody(contentLength: 4096) { writer in
            try await writer.write(ByteBuffer(string: "{\"re"))
            throw DroppedConnection()
        }
        return cut
    }
}

struct DroppedConnection: Error {}

extension ProviderSimulator {
    /// The provider's error shape for a bare HTTP status (the ``FaultPlan/Fault/status(_:)`` fault).
    /// Simulators whose provider has its own shape implement ``errorBody(forStatus:)``.
    public func errorBody(forStatus status: Int) -> (contentType: String, body: String) {
        ("application/json", "{\"error\":\"sandbox fault: HTTP \(status)\"}")
    }
}
