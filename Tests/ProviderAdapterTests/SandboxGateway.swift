import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore
@_spi(Internals) import PaymentGateway
import PluginHost
import ProviderSandbox
import TestSupport

/// The acceptance fixture of the provider adapters: the shipped simulators
/// in-process on a loopback port, and a ``PaymentGateway`` over a scratch copy
/// of the shipped manifests in sandbox mode (each provider manifest enabled
/// against its simulator with sandbox credentials), loading the real adapter
/// libraries through the bridge.
///
/// ```swift
/// let fx = try await SandboxGateway.start()
/// defer { Task { await fx.stop() } }   // or: await fx.stop() at the end
/// let session = try await fx.gateway.createSession(NewSession(amount: Money(value: 1000, currency: "SAR"), country: "SA", orderId: "o-1"))
/// ```
final class SandboxGateway: Sendable {
    let gateway: PaymentGateway
    let folder: URL
    private let server: SimulatorServer

    private init(gateway: PaymentGateway, folder: URL, server: SimulatorServer) {
        self.gateway = gateway
        self.folder = folder
        self.server = server
    }

    var sandbox: ProviderSandbox { server.sandbox }

    /// Starts the simulators, then the gateway against them.
    /// - Parameters:
    ///   - configure: changes to the gateway's configuration (timeouts, …).
    ///   - editManifests: changes to the copied manifests folder, before the gateway reads it.
    /// Each provider request's timeout in the tests (the shipped sandbox
    /// blocks say 3 s): a backstop for a loaded machine, scaled by
    /// `GATEWAY_TEST_TIME_SCALE`, never what decides a test.
    static let requestTimeout = TestTime.milliseconds(8_000)
    /// A simulator latency that outlasts ``requestTimeout`` however slow the
    /// machine: the adapter's clock starts before the simulator's does, so a
    /// request delayed this long always times out first.
    static let pastRequestTimeout = requestTimeout + 2_000

    static func start(faults: FaultPlan = FaultPlan(),
                      configure: (inout PaymentGateway.Configuration) -> Void = { _ in },
                      editManifests: (URL) throws -> Void = { _ in }) async throws -> SandboxGateway {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sandbox-gateway-\(UUID().uuidString)")
        let manifests = folder.appendingPathComponent("manifests")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: BuildProducts.shippedManifests, to: manifests)
        try? FileManager.default.removeItem(at: manifests.appendingPathComponent("schema"))
        try editManifests(manifests)
        // The sandbox's 3 s per provider request, raised (a test that set its own keeps it).
        for file in try FileManager.default.contentsOfDirectory(at: manifests, includingPropertiesForKeys: nil) where file.pathExtension == "json" {
            let text = try String(contentsOf: file, encoding: .utf8)
            let raised = text.replacingOccurrences(of: #""request_timeout_ms": 3000"#, with: #""request_timeout_ms": \#(requestTimeout)"#)
            if raised != text { try Data(raised.utf8).write(to: file) }
        }

        var quiet = Logger(label: "sandbox")
        quiet.logLevel = .critical   // cancelling the server at stop() logs a harmless "already closed"
        var client = HTTPClient.Configuration(redirectConfiguration: .disallow)
        client.timeout = .init(connect: .seconds(Int64(TestTime.seconds(30))), read: .seconds(Int64(TestTime.seconds(60))))
        let server = try await SimulatorServer.start(ProviderSandbox.shipped(faults: faults, logger: quiet), client: client)
        let sandbox = server.sandbox

        var secrets: [String: [String: String]] = [:]
        for simulator in sandbox.simulators { secrets[simulator.id] = simulator.sandboxSecrets }
        let data = folder.appendingPathComponent("data")
        var configuration = PaymentGateway.Configuration(manifests: manifests.path, data: data.path)
        configuration.libraries = BuildProducts.sharedLibraryStore
        // A machine running many gateways at once must not make instruments late.
        configuration.checkout.instrumentsTimeout = .seconds(60)
        configuration.sandbox = SandboxOverlay(baseURL: server.root, secrets: secrets,
                                               secretsDirectory: data.appendingPathComponent("sandbox/secrets"))
        configure(&configuration)
        var logger = Logger(label: "sandbox-gateway")
        logger.logLevel = .warning
        do {
            let gateway = try await PaymentGateway.open(configuration: configuration, logger: logger)
            return SandboxGateway(gateway: gateway, folder: folder, server: server)
        } catch {
            await server.stop()
            throw error
        }
    }

    /// The simulator with `id`, as its own type.
    func simulator<S: ProviderSimulator>(_ id: String, as type: S.Type = S.self) throws -> S {
        guard let simulator = sandbox.simulator(id) as? S else {
            throw SandboxGatewayError(message: "no simulator \(id) of type \(S.self)")
        }
        return simulator
    }

    /// The payer's step on a hosted page: GET `url` with
    /// `sandbox_outcome=<outcome>` added (approve, decline, cancel), redirects
    /// not followed.
    func payerStep(_ url: String, outcome: String) async throws -> (status: Int, location: String?, body: String) {
        let separator = url.contains("?") ? "&" : "?"
        return try await get(url + separator + "sandbox_outcome=" + outcome)
    }

    /// GET `url` (redirects not followed).
    func get(_ url: String) async throws -> (status: Int, location: String?, body: String) {
        let reply = try await server.send(HTTPClientRequest(url: url), timeout: .seconds(30))
        return (reply.status, reply.location, reply.text)
    }

    /// `method url` with `headers` and an optional JSON `body`, as a payer's
    /// device calls a provider's client API (redirects not followed).
    func send(_ method: String, _ url: String, headers: [(name: String, value: String)], json: String? = nil) async throws
        -> (status: Int, location: String?, body: String) {
        let reply = try await server.send(method, url, headers: headers, body: json.map { (contentType: "application/json", text: $0) })
        return (reply.status, reply.location, reply.text)
    }

    /// POSTs `form` (`application/x-www-form-urlencoded`) to `url`, as a
    /// browser submits a page's form (redirects not followed).
    func post(_ url: String, form: [String: String]) async throws -> (status: Int, location: String?, body: String) {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let text = form.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
        let reply = try await server.send("POST", url, body: (contentType: "application/x-www-form-urlencoded", text: text))
        return (reply.status, reply.location, reply.text)
    }

    /// The sandbox's base URL, `http://127.0.0.1:PORT`.
    var root: String { server.root }

    /// Stops the gateway (its adapters drain), then the simulators, and removes the scratch folder.
    func stop() async {
        await gateway.shutdown()
        await server.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}

struct SandboxGatewayError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
