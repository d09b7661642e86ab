import ArgumentParser
import CheckoutHTTP
import Foundation
import Logging
import PaymentGateway

/// `gateway serve`: the checkout API over HTTP on the embedded default.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the checkout API (HTTP) on the embedded default: SQLite under --data, the manifests folder watched live.",
        discussion: """
            Admin routes (/admin) exist only when a token is configured: GATEWAY_ADMIN_TOKEN, or a file named by \
            --admin-token-file or GATEWAY_ADMIN_TOKEN_FILE (16 characters at least). SIGHUP reloads the manifests; \
            SIGTERM and SIGINT shut down gracefully.
            """)

    @OptionGroup var host: HostOptions

    @Option(name: .customLong("host"), help: "The address to listen on (loopback by default).")
    var address: String = "127.0.0.1"

    @Option(help: "The port to listen on (0: any free port, printed at start).")
    var port: Int = 8080

    @Flag(help: "Sandbox mode: the provider simulators run in-process, every manifest with a sandbox block is enabled against them with sandbox credentials (the files are not changed), and the mock keeps its books under --data.")
    var sandbox = false

    @Option(help: "With --sandbox: delay every simulator answer by this many milliseconds (a slow provider).")
    var sandboxLatencyMs: Int = 0

    @Option(help: "A file holding the admin bearer token.")
    var adminTokenFile: String?

    @Option(help: "The log level (trace, debug, info, notice, warning, error, critical).")
    var logLevel: String = "info"

    func run() async throws {
        guard sandboxLatencyMs >= 0 else { throw ValidationError("--sandbox-latency-ms must be 0 or more (got \(sandboxLatencyMs))") }
        if sandbox { HostSetup.keepSandboxBooks(in: host.data) }
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical (got \(logLevel))")
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "gateway")
        let admin: AdminAccess?
        do { admin = try AdminAccess.configured(file: adminTokenFile) }
        catch { throw ValidationError("\(error)") }
        let metrics = GatewayMetrics()
        var configuration = PaymentGateway.Configuration(manifests: host.manifests, data: host.data)
        let simulators = sandbox ? try await InProcessSandbox.start(data: configuration.data, latencyMilliseconds: sandboxLatencyMs, logger: logger) : nil
        configuration.sandbox = simulators?.overlay
        configuration.callObserver = { metrics.adapterCall($0) }
        let gateway = try PaymentGateway(configuration: configuration, logger: logger)
        var server = CheckoutServer.Configuration()
        server.host = address
        server.port = port
        let checkoutServer = CheckoutServer(gateway: gateway, metrics: metrics, admin: admin, configuration: server, logger: logger)
        let address = self.address
        let simulatorsLine = simulators.map { "; provider simulators on \($0.overlay.baseURL)" } ?? ""
        do {
            try await checkoutServer.run { port in
                let line = "gateway serving the checkout API on http://\(address):\(port) (admin API \(admin == nil ? "off: no token configured" : "on"))\(simulatorsLine)\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            }
        } catch {
            await simulators?.stop()
            throw error
        }
        await simulators?.stop()
    }
}
