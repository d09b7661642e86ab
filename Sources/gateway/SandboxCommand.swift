import ArgumentParser
import Foundation
import Logging
import PluginHost
import ProviderSandbox
import ServiceLifecycle

/// `gateway sandbox`: the provider simulators alone, on loopback.
struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox",
        abstract: "Serve the provider simulators (HyperPay, STC Pay, Tabby, Tamara, Swedbank Pay, Worldline) on loopback.",
        discussion: """
            Each simulator speaks its provider's documented API under /<provider>/… (HyperPay's \
            POST /v1/checkouts is /hyperpay/v1/checkouts), with state, hosted payer pages \
            (complete them in a browser, or fetch the action URL with ?sandbox_outcome=approve|decline|cancel) \
            and faults (POST /_sandbox/faults; charge counts at GET /_sandbox/stats). \
            It listens on loopback only: the simulators accept fixed sandbox credentials.
            """)

    @Option(help: "The port to listen on (0: any free port, printed at start).")
    var port: Int = 8090

    @Option(help: "Delay every simulator answer by this many milliseconds (a slow provider).")
    var latencyMs: Int = 0

    @Option(help: "The port of the Worldline simulator alone, at the root (/v2/{merchantId}/…), for Worldline's own SDKs (0: any free port, printed at start).")
    var worldlinePort: Int = 8091

    func run() async throws {
        guard latencyMs >= 0 else { throw ValidationError("--latency-ms must be 0 or more (got \(latencyMs))") }
        let sandbox = ProviderSandbox.shipped(faults: FaultPlan(baseLatencyMilliseconds: latencyMs))
        let logger = Logger(label: "sandbox")
        let simulators = sandbox.simulators.map(\.id).joined(separator: ", ")
        let application = sandbox.application(port: port) { port in
            let line = "gateway sandbox serving \(simulators) on http://127.0.0.1:\(port)\n"
            FileHandle.standardOutput.write(Data(line.utf8))
        }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: application)]
        if let worldline = sandbox.rootApplication(for: "worldline", port: worldlinePort, onRunning: { port in
            let line = "gateway sandbox serving worldline alone at the root of http://127.0.0.1:\(port) (an SDK's api endpoint)\n"
            FileHandle.standardOutput.write(Data(line.utf8))
        }) {
            services.append(.init(service: worldline))
        }
        try await ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)).run()
    }
}

/// The simulators running in-process beside `gateway serve --sandbox`.
struct InProcessSandbox {
    let sandbox: ProviderSandbox
    let task: Task<Void, any Error>
    let overlay: SandboxOverlay

    /// Starts the simulators on a free loopback port and waits until they listen.
    static func start(data: URL, latencyMilliseconds: Int, logger: Logger) async throws -> InProcessSandbox {
        let sandbox = ProviderSandbox.shipped(faults: FaultPlan(baseLatencyMilliseconds: latencyMilliseconds))
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = sandbox.application(port: 0) { port in continuation.yield(port) }
        let task = Task { try await application.runService() }
        var iterator = ports.makeAsyncIterator()
        guard await iterator.next() != nil, let baseURL = sandbox.baseURL else {
            task.cancel()
            throw ValidationError("the provider simulators did not start")
        }
        var secrets: [String: [String: String]] = [:]
        for simulator in sandbox.simulators { secrets[simulator.id] = simulator.sandboxSecrets }
        let overlay = SandboxOverlay(baseURL: baseURL, secrets: secrets,
                                     secretsDirectory: data.appendingPathComponent("sandbox/secrets", isDirectory: true))
        logger.info("provider simulators on \(baseURL): \(sandbox.simulators.map(\.id).joined(separator: ", "))")
        return InProcessSandbox(sandbox: sandbox, task: task, overlay: overlay)
    }

    func stop() async {
        task.cancel()
        _ = try? await task.value
    }
}
